/**
 * Resolves configuration once, at the edge, into a plain typed object: env vars, `.env`, and the
 * optional config file (`DIMSUM_CONFIG`, else `./dimsum.config.json`, else `$DIMSUM_HOME/config.json`).
 */

import { realpathSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { type AttachmentLimits, DEFAULT_ATTACHMENT_LIMITS } from "../attachments/kinds.js";
import { DimsumError } from "../errors.js";
import { type ModelCallLimits, resolveCallLimits } from "../llm/call-limits.js";
import { defaultToolsConfig } from "../tools/builtin/defaults.js";
import { allowedEnv, DEFAULT_ENV_ALLOW, type ShellSandboxConfig } from "../tools/builtin/sandbox/index.js";
import { DEFAULT_PROCESS_SETTINGS, type ProcessSettings } from "../tools/process/types.js";
import type { ToolsConfig } from "../tools/types.js";
import { webSearchConfigFromEnv } from "../tools/web-search/config.js";
import type { WebSearchConfig } from "../tools/web-search/types.js";
import { type ConfigFile, emptyConfigFile, readConfigFile } from "./config-file.js";
import { type EnvMap, loadEnv } from "./env.js";
import type { QueueMode } from "./queue-mode.js";
import { type SpeechToTextConfig, speechToTextConfigFrom } from "./speech-to-text.js";
import { type TelemetryConfig, telemetryConfigFromEnv } from "./telemetry.js";

export interface DimsumConfig {
  /** Data directory (`DIMSUM_HOME`, default `~/.dimsum`). */
  home: string;
  /** Default `provider:model` (`DIMSUM_MODEL`, then the config file); a comma list is a fallback chain. */
  defaultModel: string | undefined;
  /** How long model chains skip a provider that failed (`modelFallback` in the config file). */
  modelFallback: { cooldownMs: number; authCooldownMs: number };
  maxIterations: number;
  /**
   * When chat answers start on this instance: at once, unless it already holds `runs.concurrency`
   * live answers (the backstop, default 1000; an answer waiting on its model counts only here), its
   * event loop's median delay is over `runs.maxLoopDelayMs` (default 50) while the loop is busy
   * with its own work, or its heap is fuller than
   * `runs.maxHeapShare` of the limit (default 0.85); and resumes of one answer after crashes before
   * it is given up (`runs.maxResumes`, default 2).
   */
  runs: { concurrency: number; maxLoopDelayMs: number; maxHeapShare: number; maxResumes: number };
  /** How long a run waits for approvals before it ends unanswered (`approvals.timeoutHours`, default 24). */
  approvalTimeoutMs: number;
  /**
   * Messages sent while an agent works: how long `collect` waits for the next message of a burst
   * (`queue.collectMs`, default 1500), and the mode of chats without their own.
   */
  queue: { collectMs: number; direct: QueueMode; group: QueueMode };
  /** Groups: agent-to-agent hand-offs by @mention one chain may make (`groups.maxHandoffs`, default 5). */
  groups: { maxHandoffs: number };
  /** Attachment limits per message (`attachments` in the config file; 10 MB images, 20 MB PDFs, 10 files). */
  attachments: AttachmentLimits;
  /** Person turns whose images the model still sees as images (`context.keepImagesTurns`, default 3). */
  keepImagesTurns: number;
  /** Deadlines of every model call (`modelCalls` in the config file over the defaults); copied into each ModelSpec. */
  modelCalls: ModelCallLimits;
  /**
   * The variables (process environment over `.env`) that provider keys and base URLs
   * (`OPENAI_API_KEY`, …) are looked up in and that `${VAR}` / `{{env.VAR}}` in mcp.json and HTTP tool
   * files refer to. Everything else is resolved into the typed fields below, once, here.
   */
  env: EnvMap;
  /** Default user id of CLI sessions (`DIMSUM_USER`). */
  user: string | undefined;
  /** `web_search` engines and keys (`DIMSUM_SEARCH_ENGINES`, `SEARXNG_URL`, `BRAVE_API_KEY`, …). */
  webSearch: WebSearchConfig;
  /** `provider:model` of the embedding model (`DIMSUM_EMBEDDING_MODEL`); BM25 alone when unset. */
  embeddingModel: string | undefined;
  /** Voice messages' transcription endpoint (`DIMSUM_STT_BASE_URL`, …, or `speechToText`); unset: not read. */
  speechToText: SpeechToTextConfig | undefined;
  server: {
    /** Trust X-Forwarded-For/-Proto from a reverse proxy (`DIMSUM_TRUST_PROXY=1`). */
    trustProxy: boolean;
    /** The port `dimsum serve` listens on when `--port` is not given (`PORT`, as hosting platforms set it). */
    port: number | undefined;
    /** The first owner's password (`DIMSUM_OWNER_PASSWORD`); a random one is printed when unset. */
    ownerPassword: string | undefined;
    /**
     * `postgres://…` (`DIMSUM_DATABASE_URL`): the server's state lives there, shared by every instance;
     * unset: the SQLite file in DIMSUM_HOME.
     */
    databaseUrl: string | undefined;
    /** `redis://…` (`DIMSUM_REDIS_URL`): carries live events between instances. */
    redisUrl: string | undefined;
    /**
     * The key sealing provider keys and MCP secrets (`DIMSUM_SECRET_KEY`, 32 bytes in base64); when
     * unset, `$DIMSUM_HOME/secret.key` (created on first use). Instances sharing a database share it.
     */
    secretKey: string | undefined;
  };
  file: ConfigFile;
  /** Path of the config file that was read, if any. */
  configPath: string | undefined;
  tools: ToolsConfig;
  /** OpenTelemetry GenAI export (`OTEL_EXPORTER_OTLP_ENDPOINT`, …); undefined: nothing exported or loaded. */
  telemetry: TelemetryConfig | undefined;
}

export interface LoadConfigOptions {
  cwd?: string;
  env?: EnvMap;
}

/** Loads the whole configuration for one process. Throws DimsumError('config') naming the bad file. */
export function loadConfig(options: LoadConfigOptions = {}): DimsumConfig {
  const cwd = options.cwd ?? process.cwd();
  const env = loadEnv(cwd, options.env ?? process.env);
  const home = resolve(cwd, env.DIMSUM_HOME || join(homedir(), ".dimsum"));
  const candidates = env.DIMSUM_CONFIG
    ? [resolve(cwd, env.DIMSUM_CONFIG)]
    : [join(cwd, "dimsum.config.json"), join(home, "config.json")];
  let file: ConfigFile | undefined;
  let configPath: string | undefined;
  for (const path of candidates) {
    file = readConfigFile(path);
    if (file) {
      configPath = path;
      break;
    }
  }
  file ??= emptyConfigFile();
  return {
    home,
    defaultModel:
      env.DIMSUM_MODEL ||
      (Array.isArray(file.defaultModel) ? file.defaultModel.join(",") : file.defaultModel),
    modelFallback: {
      cooldownMs: (file.modelFallback.cooldownSeconds ?? 60) * 1000,
      authCooldownMs: (file.modelFallback.authCooldownSeconds ?? 1800) * 1000,
    },
    maxIterations: file.maxIterations ?? 10,
    runs: {
      concurrency: file.runs.concurrency ?? 1000,
      maxLoopDelayMs: file.runs.maxLoopDelayMs ?? 50,
      maxHeapShare: file.runs.maxHeapShare ?? 0.85,
      maxResumes: file.runs.maxResumes ?? 2,
    },
    approvalTimeoutMs: (file.approvals.timeoutHours ?? 24) * 3_600_000,
    queue: {
      collectMs: file.queue.collectMs ?? 1500,
      direct: file.queue.direct ?? "steer",
      group: file.queue.group ?? "collect",
    },
    groups: { maxHandoffs: file.groups.maxHandoffs ?? 5 },
    modelCalls: resolveCallLimits(file.modelCalls),
    attachments: attachmentLimits(file.attachments),
    keepImagesTurns: file.context.keepImagesTurns ?? DEFAULT_KEEP_IMAGES_TURNS,
    env,
    user: env.DIMSUM_USER || undefined,
    webSearch: webSearchConfigFromEnv(env),
    embeddingModel: env.DIMSUM_EMBEDDING_MODEL?.trim() || undefined,
    speechToText: speechToTextConfigFrom(env, file),
    server: {
      trustProxy: env.DIMSUM_TRUST_PROXY === "1" || env.DIMSUM_TRUST_PROXY === "true",
      port: portFrom(env.PORT),
      ownerPassword: env.DIMSUM_OWNER_PASSWORD,
      databaseUrl: env.DIMSUM_DATABASE_URL?.trim() || undefined,
      redisUrl: env.DIMSUM_REDIS_URL?.trim() || undefined,
      secretKey: env.DIMSUM_SECRET_KEY?.trim() || undefined,
    },
    file,
    configPath,
    telemetry: telemetryConfigFromEnv(env),
    tools: toolsConfigFrom(file, {
      env,
      hidden: [
        home,
        homedir(),
        // Masked too when a workspace contains the home folder (`dimsum run` started in ~).
        ...HOME_SECRETS.map((name) => join(homedir(), name)),
        join(cwd, ".env"),
        ...(configPath ? [configPath] : []),
      ],
      cwd,
    }),
  };
}

interface ShellSurroundings {
  env: EnvMap;
  /** Places commands must never see: DIMSUM_HOME, the user's home, `.env`, the config file. */
  hidden: string[];
  cwd: string;
}

const MB = 1024 * 1024;

/** Credentials kept in a home folder. */
const HOME_SECRETS = [
  ".ssh",
  ".gnupg",
  ".aws",
  ".azure",
  ".kube",
  ".docker",
  ".netrc",
  ".npmrc",
  ".pypirc",
  ".git-credentials",
  ".config/gh",
  ".config/gcloud",
];

/** The shell sandbox: bwrap path, network, the environment allow list resolved to values, limits. */
function sandboxConfigFrom(file: ConfigFile, around: ShellSurroundings): ShellSandboxConfig {
  const defaults = defaultToolsConfig().shell.sandbox;
  const shell = file.tools.shell;
  const sandbox = shell.sandbox;
  const names = [...DEFAULT_ENV_ALLOW, ...(sandbox.env ?? [])];
  const hidden = [...around.hidden, ...(sandbox.hide ?? []).map((p) => resolve(around.cwd, p))];
  return {
    bwrapPath: sandbox.bwrapPath ? resolve(around.cwd, sandbox.bwrapPath) : defaults.bwrapPath,
    network: sandbox.network ?? defaults.network,
    networkAgents: sandbox.networkAgents ?? defaults.networkAgents,
    env: allowedEnv(around.env, names),
    hidePaths: [...new Set(hidden.map((p) => realOrSelf(p)))],
    allowUnsandboxed: shell.allowUnsandboxed ?? defaults.allowUnsandboxed,
    limits: {
      processes: sandbox.maxProcesses ?? defaults.limits.processes,
      memoryBytes: sandbox.maxMemoryMB ? sandbox.maxMemoryMB * MB : defaults.limits.memoryBytes,
      cpuSeconds: sandbox.cpuSeconds ?? defaults.limits.cpuSeconds,
      fileBytes: sandbox.maxFileMB ? sandbox.maxFileMB * MB : defaults.limits.fileBytes,
      floodBytes: sandbox.floodMB ? sandbox.floodMB * MB : defaults.limits.floodBytes,
    },
  };
}

/** The real path (workspaces are real paths, so hidden ones must be too), or the path itself. */
function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** Tool policy: deny/confirm rules from the file extend the safe defaults; `allow` replaces them. */
function toolsConfigFrom(file: ConfigFile, around: ShellSurroundings): ToolsConfig {
  const defaults = defaultToolsConfig();
  const shell = file.tools.shell;
  const fetch = file.tools.fetch;
  return {
    shell: {
      allow: shell.allow ?? defaults.shell.allow,
      deny: [...defaults.shell.deny, ...(shell.deny ?? [])],
      confirm: [...defaults.shell.confirm, ...(shell.confirm ?? [])],
      timeoutMs: shell.timeoutSeconds ? shell.timeoutSeconds * 1000 : defaults.shell.timeoutMs,
      maxOutputBytes: shell.maxOutputBytes ?? defaults.shell.maxOutputBytes,
      sandbox: sandboxConfigFrom(file, around),
    },
    fetch: {
      allowPrivateNetwork: fetch.allowPrivateNetwork ?? defaults.fetch.allowPrivateNetwork,
      timeoutMs: fetch.timeoutSeconds ? fetch.timeoutSeconds * 1000 : defaults.fetch.timeoutMs,
      maxBytes: fetch.maxBytes ?? defaults.fetch.maxBytes,
    },
    processes: processSettingsFrom(file.tools.processes ?? {}),
  };
}

/** Session process limits: the file's, over the defaults. */
function processSettingsFrom(file: NonNullable<ConfigFile["tools"]["processes"]>): ProcessSettings {
  const d = DEFAULT_PROCESS_SETTINGS;
  return {
    ...d,
    perSession: file.perSession ?? d.perSession,
    perServer: file.perServer ?? d.perServer,
    idleMs: file.idleMinutes !== undefined ? file.idleMinutes * 60_000 : d.idleMs,
    maxLifetimeMs: file.maxLifetimeMinutes !== undefined ? file.maxLifetimeMinutes * 60_000 : d.maxLifetimeMs,
  };
}

/** Person turns whose images the model sees as images when the config says nothing. */
export const DEFAULT_KEEP_IMAGES_TURNS = 3;

/** `PORT` as a port number; unset or empty: none; anything else but 0–65535 is a configuration error. */
function portFrom(value: string | undefined): number | undefined {
  const text = value?.trim() ?? "";
  if (text === "") return undefined;
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65_535) {
    throw new DimsumError("config", `PORT is "${text}", not a port number`, {
      hint: "set PORT to a number from 1 to 65535 (or 0 for any free port), or remove it and use --port",
    });
  }
  return port;
}

/** The attachment limits: the config file's megabytes over the defaults. */
function attachmentLimits(file: ConfigFile["attachments"]): AttachmentLimits {
  const mb = (value: number | undefined, fallback: number) =>
    value === undefined ? fallback : Math.round(value * 1024 * 1024);
  return {
    imageBytes: mb(file.maxImageMB, DEFAULT_ATTACHMENT_LIMITS.imageBytes),
    pdfBytes: mb(file.maxPdfMB, DEFAULT_ATTACHMENT_LIMITS.pdfBytes),
    textBytes: mb(file.maxTextMB, DEFAULT_ATTACHMENT_LIMITS.textBytes),
    filesPerMessage: file.maxFiles ?? DEFAULT_ATTACHMENT_LIMITS.filesPerMessage,
  };
}
