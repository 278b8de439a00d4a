/** Turns a `provider:model` string into a ModelSpec, with errors that say which setting to fix. */
import { DimsumError } from "../errors.js";
import type { ModelSpec, WireProtocol } from "../llm/types.js";
import type { DimsumConfig } from "./load-config.js";
import { DEFAULT_CONTEXT_WINDOW, lookupModel } from "./model-catalog.js";
import { builtinProviders, canonicalProviderName } from "./providers.js";

interface ProviderResolution {
  name: string;
  protocol: WireProtocol;
  baseUrl: string;
  apiKey: string | undefined;
  keyEnv: string | undefined;
  headers: Record<string, string> | undefined;
  quirks: Record<string, boolean | string | number> | undefined;
  /** Ollama, or a custom provider on this machine or the local network: servers that may lack a tool parser. */
  local: boolean;
}

/** Names of every provider this configuration knows, built-in first. */
export function knownProviders(config: DimsumConfig): string[] {
  return [...builtinProviders.keys(), ...Object.keys(config.file.providers)];
}

/** Splits `provider:model`; the model part may itself contain colons (`ollama:qwen2.5:7b`). */
export function parseModelString(value: string): { provider: string; model: string } {
  const at = value.indexOf(":");
  if (at <= 0 || at === value.length - 1) {
    throw new DimsumError("config", `bad model "${value}": expected provider:model`, {
      hint: "for example openai:gpt-4o, anthropic:claude-sonnet-4-5, ollama:qwen2.5:7b",
    });
  }
  return { provider: value.slice(0, at), model: value.slice(at + 1) };
}

/** The models of a setting: a comma list (`DIMSUM_MODEL`, `--model`) or an array (config, agents). */
export function modelChainOf(value: string | readonly string[]): string[] {
  const items = typeof value === "string" ? value.split(",") : value;
  return items.map((item) => item.trim()).filter((item) => item !== "");
}

/**
 * Resolves a model setting (or the configured default) into a ready-to-call ModelSpec. A chain
 * (`a:x,b:y`) resolves every model; the first is returned with the rest as its `fallbacks`.
 */
export function resolveModel(config: DimsumConfig, value: string | readonly string[] | undefined): ModelSpec {
  const chain = modelChainOf(value ?? config.defaultModel ?? "");
  const [first, ...rest] = chain;
  if (first === undefined) {
    throw new DimsumError("config", "no model chosen", {
      hint: "pass --model provider:model or set DIMSUM_MODEL (e.g. DIMSUM_MODEL=openai:gpt-4o, or a fallback chain openai:gpt-4o,deepseek:deepseek-chat)",
    });
  }
  const spec = resolveOne(config, first);
  if (rest.length > 0) spec.fallbacks = rest.map((item) => resolveOne(config, item));
  return spec;
}

function resolveOne(config: DimsumConfig, modelString: string): ModelSpec {
  const { provider, model } = parseModelString(modelString);
  const resolved = resolveProvider(config, provider);
  const catalog = lookupModel(model);
  const override = config.file.models[`${resolved.name}:${model}`];
  const spec: ModelSpec = {
    provider: resolved.name,
    id: model,
    protocol: resolved.protocol,
    baseUrl: resolved.baseUrl.replace(/\/+$/, ""),
    contextWindow: override?.contextWindow ?? catalog?.contextWindow ?? DEFAULT_CONTEXT_WINDOW,
    limits: { ...config.modelCalls },
  };
  const maxOutputTokens = override?.maxOutputTokens ?? catalog?.maxOutputTokens;
  if (maxOutputTokens) spec.maxOutputTokens = maxOutputTokens;
  const pricing = override?.pricing ?? catalog?.pricing;
  if (pricing) spec.pricing = pricing;
  if (resolved.apiKey) spec.apiKey = resolved.apiKey;
  if (resolved.keyEnv) spec.apiKeyEnv = resolved.keyEnv;
  if (resolved.headers) spec.headers = resolved.headers;
  const toolCallFormat =
    override?.toolCallFormat ?? (resolved.local ? (catalog?.toolCallFormat ?? "auto") : undefined);
  if (toolCallFormat !== undefined && toolCallFormat !== "none") spec.toolCallFormat = toolCallFormat;
  const quirks = { ...resolved.quirks, ...override?.quirks };
  if (Object.keys(quirks).length > 0) spec.quirks = quirks;
  if (config.file.cache.ttl) spec.cacheTtl = config.file.cache.ttl;
  if (resolved.keyEnv && !resolved.apiKey) {
    throw new DimsumError("config", `no API key for ${resolved.name}`, {
      hint: `set ${resolved.keyEnv} in the environment or in .env`,
    });
  }
  return spec;
}

function resolveProvider(config: DimsumConfig, rawName: string): ProviderResolution {
  const custom = config.file.providers[rawName];
  if (custom) {
    return {
      name: rawName,
      protocol: custom.protocol,
      baseUrl: custom.baseUrl,
      apiKey: custom.apiKey ?? (custom.apiKeyEnv ? config.env[custom.apiKeyEnv] : undefined),
      keyEnv: custom.apiKeyEnv,
      headers: custom.headers,
      quirks: custom.quirks,
      local: isLocalUrl(custom.baseUrl),
    };
  }
  const name = canonicalProviderName(rawName);
  const builtin = builtinProviders.get(name);
  if (!builtin) {
    throw new DimsumError("config", `unknown provider "${rawName}"`, {
      hint: `known providers: ${knownProviders(config).join(", ")}; add others under "providers" in dimsum.config.json`,
    });
  }
  return {
    name,
    protocol: builtin.protocol,
    baseUrl: withRequiredSuffix(
      config.env[builtin.baseUrlEnv] || builtin.defaultBaseUrl,
      builtin.baseUrlSuffix,
    ),
    apiKey: builtin.keyEnv ? config.env[builtin.keyEnv] || undefined : undefined,
    keyEnv: builtin.keyEnv,
    headers: undefined,
    quirks: builtin.quirks,
    local: name === "ollama",
  };
}

/** Ollama users write `http://localhost:11434`; its OpenAI-compatible API lives under `/v1`. */
function withRequiredSuffix(url: string, suffix: string | undefined): string {
  const trimmed = url.replace(/\/+$/, "");
  return suffix && !trimmed.endsWith(suffix) ? trimmed + suffix : trimmed;
}

/** Loopback, `localhost`, `*.local` and private IPv4 ranges. */
function isLocalUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  } catch {
    return false;
  }
  return (
    host === "localhost" ||
    host.endsWith(".local") ||
    host === "::1" ||
    /^127\./.test(host) ||
    /^10\./.test(host) ||
    /^192\.168\./.test(host) ||
    /^172\.(1[6-9]|2\d|3[01])\./.test(host)
  );
}
