/** The optional JSON config file: custom OpenAI-compatible providers, model overrides, tool policy. */
import { readFileSync } from "node:fs";
import * as z from "zod";
import { DimsumError } from "../errors.js";
import { parseConfigJson } from "./parse-config-json.js";

/**
 * The file's schema, built on first use: most runs have no config file, and building zod schemas
 * costs a few milliseconds of every cold start.
 */
function buildSchemas() {
  const pricing = z.object({
    input: z.number(),
    output: z.number(),
    cachedInput: z.number().optional(),
    cacheWrite: z.number().optional(),
  });

  const quirks = z.record(z.string(), z.union([z.boolean(), z.string(), z.number()]));

  const providerEntry = z.object({
    baseUrl: z.string().url(),
    protocol: z.enum(["openai", "anthropic", "gemini"]).default("openai"),
    apiKeyEnv: z.string().optional(),
    /** Discouraged (prefer apiKeyEnv) but supported for local servers with a fixed key. */
    apiKey: z.string().optional(),
    headers: z.record(z.string(), z.string()).optional(),
    quirks: quirks.optional(),
  });

  const modelEntry = z.object({
    contextWindow: z.number().int().positive().optional(),
    maxOutputTokens: z.number().int().positive().optional(),
    pricing: pricing.optional(),
    quirks: quirks.optional(),
    /** What the model reads besides text, over the catalogue (e.g. a vision model it does not know). */
    input: z.object({ images: z.boolean().optional(), pdf: z.boolean().optional() }).strict().optional(),
    /** How the model writes tool calls as text when its server has no tool parser (src/llm/text-tool-calls.ts). */
    toolCallFormat: z.enum(["hermes", "qwen3-coder", "mistral", "llama-json", "auto", "none"]).optional(),
  });

  const limitMs = z.number().int().positive();

  /** Deadlines of each model call (see src/llm/call-limits.ts); defaults fill what is missing. */
  const modelCallsEntry = z
    .object({
      firstByteMs: limitMs.optional(),
      idleMs: limitMs.optional(),
      callMs: limitMs.optional(),
      retryBudgetMs: limitMs.optional(),
    })
    .strict();

  const queueModeEntry = z.enum(["steer", "followup", "collect", "interrupt"]);

  const configFile = z
    .object({
      /** `provider:model`, a comma list, or an array: a chain tried in order (src/llm/fallback-chain.ts). */
      defaultModel: z.union([z.string(), z.array(z.string().min(1)).min(1)]).optional(),
      /** How long a provider that failed is skipped by model chains. */
      modelFallback: z
        .object({
          cooldownSeconds: z.number().positive().max(86_400).optional(),
          authCooldownSeconds: z
            .number()
            .positive()
            .max(7 * 86_400)
            .optional(),
        })
        .strict()
        .default({}),
      maxIterations: z.number().int().positive().max(200).optional(),
      /**
       * Chat answers: when one starts on an instance (the backstop of live answers, the event-loop
       * delay and heap share over which new ones wait), how often one is resumed after crashes.
       */
      runs: z
        .object({
          concurrency: z.number().int().positive().max(100_000).optional(),
          maxLoopDelayMs: z.number().positive().max(10_000).optional(),
          maxHeapShare: z.number().positive().max(1).optional(),
          maxResumes: z.number().int().min(0).max(100).optional(),
        })
        .strict()
        .default({}),
      /** Tool calls waiting for a person: how long a run waits before it ends unanswered. */
      approvals: z
        .object({
          timeoutHours: z
            .number()
            .positive()
            .max(24 * 365)
            .optional(),
        })
        .strict()
        .default({}),
      /** Messages sent while an agent works: how long `collect` waits for the rest of a burst. */
      queue: z
        .object({
          collectMs: z.number().int().min(0).max(60_000).optional(),
          /** The mode of chats that have none of their own (default steer for direct chats, collect for groups). */
          direct: queueModeEntry.optional(),
          group: queueModeEntry.optional(),
        })
        .strict()
        .default({}),
      /** Groups: how many agent-to-agent hand-offs by @mention one chain may make. */
      groups: z
        .object({
          maxHandoffs: z.number().int().min(0).max(50).optional(),
        })
        .strict()
        .default({}),
      /** Files attached to a message: size limits per kind and how many one message may carry. */
      attachments: z
        .object({
          maxImageMB: z.number().positive().max(100).optional(),
          maxPdfMB: z.number().positive().max(200).optional(),
          maxTextMB: z.number().positive().max(50).optional(),
          maxFiles: z.number().int().positive().max(100).optional(),
        })
        .strict()
        .default({}),
      /** What the model is sent of the conversation: person turns whose images stay images. */
      context: z
        .object({ keepImagesTurns: z.number().int().min(0).max(100).optional() })
        .strict()
        .default({}),
      /** Prompt caching: how long Anthropic (and OpenAI, where accepted) keep a cached prefix. */
      cache: z
        .object({ ttl: z.enum(["5m", "1h"]).optional() })
        .strict()
        .default({}),
      /**
       * Voice messages from external chats: an OpenAI-compatible `/audio/transcriptions` endpoint (the
       * key from the variable `apiKeyEnv` names, or DIMSUM_STT_API_KEY; never in this file).
       */
      speechToText: z
        .object({
          baseUrl: z.string().url(),
          model: z.string().trim().min(1).max(200).optional(),
          apiKeyEnv: z
            .string()
            .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
            .optional(),
          language: z
            .string()
            .regex(/^[a-z]{2,3}$/)
            .optional(),
        })
        .strict()
        .optional(),
      /** Skills: whether keyword matches are named to the model as a hint (default true). */
      skillHints: z.boolean().optional(),
      providers: z.record(z.string(), providerEntry).default({}),
      /** Custom HTTP tool definitions (same shape as `tools/http/*.json`), checked when tools load. */
      httpTools: z.array(z.unknown()).optional(),
      /** Keyed by `provider:model`. */
      models: z.record(z.string(), modelEntry).default({}),
      modelCalls: modelCallsEntry.default({}),
      tools: z
        .object({
          shell: z
            .object({
              allow: z.array(z.string()).optional(),
              deny: z.array(z.string()).optional(),
              confirm: z.array(z.string()).optional(),
              timeoutSeconds: z.number().positive().optional(),
              maxOutputBytes: z.number().int().positive().optional(),
              /** Offer and run the shell without a sandbox where bubblewrap does not work (off by default). */
              allowUnsandboxed: z.boolean().optional(),
              sandbox: z
                .object({
                  /** Path of bubblewrap (default /usr/bin/bwrap). */
                  bwrapPath: z.string().min(1).optional(),
                  /** Give commands the network (default false). */
                  network: z.boolean().optional(),
                  /** Team agents (ids) whose commands get the network even when it is off. */
                  networkAgents: z.array(z.string()).optional(),
                  /** More environment variable names passed to commands (PATH, LANG, TERM, … always are). */
                  env: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/)).optional(),
                  /** More paths commands must not see (DIMSUM_HOME and the home folder never are). */
                  hide: z.array(z.string().min(1)).optional(),
                  maxProcesses: z.number().int().min(8).optional(),
                  maxMemoryMB: z.number().int().min(16).optional(),
                  cpuSeconds: z.number().int().positive().optional(),
                  maxFileMB: z.number().int().positive().optional(),
                  /** Output after which a command is killed as a flood (default 16 MB). */
                  floodMB: z.number().int().positive().optional(),
                })
                .strict()
                .default({}),
            })
            .default({ sandbox: {} }),
          fetch: z
            .object({
              allowPrivateNetwork: z.boolean().optional(),
              timeoutSeconds: z.number().positive().optional(),
              maxBytes: z.number().int().positive().optional(),
            })
            .default({}),
          /** Long-running session processes (process_start …): limits and lifetimes. */
          processes: z
            .object({
              perSession: z.number().int().min(0).optional(),
              perServer: z.number().int().min(0).optional(),
              idleMinutes: z.number().positive().optional(),
              maxLifetimeMinutes: z.number().positive().optional(),
            })
            .strict()
            .optional(),
        })
        .default({ shell: { sandbox: {} }, fetch: {} }),
    })
    .strict();
  return { configFile, providerEntry, modelEntry };
}

type Schemas = ReturnType<typeof buildSchemas>;
let schemas: Schemas | undefined;

export type ConfigFile = z.output<Schemas["configFile"]>;
export type CustomProviderEntry = z.output<Schemas["providerEntry"]>;
export type ModelOverride = z.output<Schemas["modelEntry"]>;

/** An empty config, as if no file existed: what the schema makes of `{}` (a test checks that it is). */
export function emptyConfigFile(): ConfigFile {
  return {
    runs: {},
    approvals: {},
    queue: {},
    groups: {},
    attachments: {},
    context: {},
    cache: {},
    providers: {},
    models: {},
    modelCalls: {},
    modelFallback: {},
    tools: { shell: { sandbox: {} }, fetch: {} },
  };
}

/** Reads and validates a config file; undefined when it does not exist. Errors name the file and field. */
export function readConfigFile(path: string): ConfigFile | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new DimsumError("config", `cannot read config file ${path}: ${(err as Error).message}`);
  }
  const json = parseConfigJson(text, `config file ${path}`);
  schemas ??= buildSchemas();
  const parsed = schemas.configFile.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.join(".") || "(top level)"}: ${i.message}`)
      .join("; ");
    throw new DimsumError("config", `config file ${path} is invalid: ${problems}`);
  }
  return parsed.data;
}
