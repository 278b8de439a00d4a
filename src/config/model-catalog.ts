/**
 * Known defaults for common models: context window, output limit and price (USD per million tokens).
 * Matching is by prefix so dated snapshots (`gpt-4o-2024-08-06`) inherit their family's numbers.
 * Anything unknown gets a conservative window and no price.
 */
import type { ModelInputKinds, ModelPricing, ToolCallFormat } from "../llm/types.js";

export interface CatalogEntry {
  contextWindow: number;
  maxOutputTokens?: number;
  pricing?: ModelPricing;
  /** How the family writes tool calls as text, used for local servers without a tool parser. */
  toolCallFormat?: ToolCallFormat;
  /** What the model reads besides text. */
  input?: ModelInputKinds;
}

const TEXT_ONLY: ModelInputKinds = { images: false, pdf: false };
const VISION: ModelInputKinds = { images: true, pdf: false };
const VISION_PDF: ModelInputKinds = { images: true, pdf: true };

/**
 * What families read besides text, longest prefix first wins: OpenAI's GPT-4o and later, Claude and
 * Gemini take images and PDFs; vision variants of open models take images. A catalogued model that
 * matches none reads text only; an uncatalogued one is unknown (see ModelSpec.input).
 */
const inputKinds: Array<[prefix: string, kinds: ModelInputKinds]> = [
  ["gpt-4o", VISION_PDF],
  ["gpt-4.1", VISION_PDF],
  ["gpt-5", VISION_PDF],
  ["o3", VISION_PDF],
  ["o4-mini", VISION_PDF],
  ["claude-", VISION_PDF],
  ["gemini-", VISION_PDF],
  ["qwen-vl", VISION],
  ["qwen2.5-vl", VISION],
  ["glm-4v", VISION],
  ["glm-4.5v", VISION],
  ["llama3.2-vision", VISION],
  ["llava", VISION],
];

/** What a model id reads besides text, by family; undefined when the family is not known. */
export function inputKindsOf(modelId: string): ModelInputKinds | undefined {
  const id = modelId.includes("/") ? modelId.slice(modelId.lastIndexOf("/") + 1) : modelId;
  let best: ModelInputKinds | undefined;
  let bestLength = -1;
  for (const [prefix, kinds] of inputKinds) {
    if (id.startsWith(prefix) && prefix.length > bestLength) {
      best = kinds;
      bestLength = prefix.length;
    }
  }
  return best;
}

/** A catalogued model of `provider` (else of OpenAI) that reads images, for messages that suggest one. */
export function imageModelFor(provider: string): string {
  const own = (suggested[provider] ?? []).find((id) => inputKindsOf(id)?.images === true);
  return own ? `${provider}:${own}` : "openai:gpt-4o";
}

// Longest prefix wins, so more specific ids come with their own entries.
const catalog: Array<[prefix: string, entry: CatalogEntry]> = [
  ["gpt-4o-mini", { contextWindow: 128_000, maxOutputTokens: 16_384, pricing: { input: 0.15, output: 0.6 } }],
  ["gpt-4o", { contextWindow: 128_000, maxOutputTokens: 16_384, pricing: { input: 2.5, output: 10 } }],
  [
    "gpt-4.1-mini",
    { contextWindow: 1_047_576, maxOutputTokens: 32_768, pricing: { input: 0.4, output: 1.6 } },
  ],
  ["gpt-4.1", { contextWindow: 1_047_576, maxOutputTokens: 32_768, pricing: { input: 2, output: 8 } }],
  ["gpt-5-mini", { contextWindow: 400_000, maxOutputTokens: 128_000, pricing: { input: 0.25, output: 2 } }],
  ["gpt-5", { contextWindow: 400_000, maxOutputTokens: 128_000, pricing: { input: 1.25, output: 10 } }],
  ["o3", { contextWindow: 200_000, maxOutputTokens: 100_000, pricing: { input: 2, output: 8 } }],
  ["o4-mini", { contextWindow: 200_000, maxOutputTokens: 100_000, pricing: { input: 1.1, output: 4.4 } }],
  ["claude-opus-4", { contextWindow: 200_000, maxOutputTokens: 32_000, pricing: { input: 15, output: 75 } }],
  ["claude-sonnet-4", { contextWindow: 200_000, maxOutputTokens: 64_000, pricing: { input: 3, output: 15 } }],
  ["claude-haiku-4", { contextWindow: 200_000, maxOutputTokens: 64_000, pricing: { input: 1, output: 5 } }],
  [
    "claude-3-5-haiku",
    { contextWindow: 200_000, maxOutputTokens: 8_192, pricing: { input: 0.8, output: 4 } },
  ],
  [
    "gemini-2.5-pro",
    { contextWindow: 1_048_576, maxOutputTokens: 65_536, pricing: { input: 1.25, output: 10 } },
  ],
  [
    "gemini-2.5-flash",
    { contextWindow: 1_048_576, maxOutputTokens: 65_536, pricing: { input: 0.3, output: 2.5 } },
  ],
  [
    "gemini-2.0-flash",
    { contextWindow: 1_048_576, maxOutputTokens: 8_192, pricing: { input: 0.1, output: 0.4 } },
  ],
  [
    "deepseek-chat",
    { contextWindow: 128_000, maxOutputTokens: 8_192, pricing: { input: 0.28, output: 0.42 } },
  ],
  [
    "deepseek-reasoner",
    { contextWindow: 128_000, maxOutputTokens: 64_000, pricing: { input: 0.28, output: 0.42 } },
  ],
  ["qwen-max", { contextWindow: 32_768, maxOutputTokens: 8_192 }],
  ["qwen-plus", { contextWindow: 131_072, maxOutputTokens: 8_192 }],
  ["qwen-turbo", { contextWindow: 1_000_000, maxOutputTokens: 8_192 }],
  ["qwen3", { contextWindow: 131_072, toolCallFormat: "hermes" }],
  ["qwen3-coder", { contextWindow: 262_144, toolCallFormat: "qwen3-coder" }],
  ["hermes", { contextWindow: 32_768, toolCallFormat: "hermes" }],
  ["mistral", { contextWindow: 32_768, toolCallFormat: "mistral" }],
  ["kimi-k2", { contextWindow: 131_072 }],
  ["moonshot-v1-128k", { contextWindow: 131_072 }],
  ["moonshot-v1-32k", { contextWindow: 32_768 }],
  ["moonshot-v1-8k", { contextWindow: 8_192 }],
  ["glm-4", { contextWindow: 128_000 }],
  ["grok-4", { contextWindow: 256_000, pricing: { input: 3, output: 15 } }],
  ["grok-3", { contextWindow: 131_072, pricing: { input: 3, output: 15 } }],
  ["grok-3-mini", { contextWindow: 131_072, pricing: { input: 0.3, output: 0.5 } }],
  ["sonar", { contextWindow: 128_000, pricing: { input: 1, output: 1 } }],
  ["sonar-pro", { contextWindow: 200_000, pricing: { input: 3, output: 15 } }],
  ["MiniMax-M2", { contextWindow: 204_800, maxOutputTokens: 131_072, pricing: { input: 0.3, output: 1.2 } }],
  ["MiniMax-M1", { contextWindow: 1_000_000, maxOutputTokens: 40_000, pricing: { input: 0.4, output: 2.2 } }],
  ["MiniMax-Text-01", { contextWindow: 1_000_192, pricing: { input: 0.2, output: 1.1 } }],
  ["llama3", { contextWindow: 8_192 }],
  ["llama3.1", { contextWindow: 131_072, toolCallFormat: "llama-json" }],
  ["llama3.2", { contextWindow: 131_072, toolCallFormat: "llama-json" }],
  ["llama3.3", { contextWindow: 131_072, toolCallFormat: "llama-json" }],
  ["qwen2.5", { contextWindow: 32_768, toolCallFormat: "hermes" }],
];

/**
 * Prompt-cache prices (USD per million tokens) by the same prefixes: input read from the cache and,
 * for Anthropic, input written to it for 5 minutes (1.25x input; a 1-hour write costs 2x input).
 */
const cachePrices: Record<string, Pick<ModelPricing, "cachedInput" | "cacheWrite">> = {
  "gpt-4o-mini": { cachedInput: 0.075 },
  "gpt-4o": { cachedInput: 1.25 },
  "gpt-4.1-mini": { cachedInput: 0.1 },
  "gpt-4.1": { cachedInput: 0.5 },
  "gpt-5-mini": { cachedInput: 0.025 },
  "gpt-5": { cachedInput: 0.125 },
  o3: { cachedInput: 0.5 },
  "o4-mini": { cachedInput: 0.275 },
  "claude-opus-4": { cachedInput: 1.5, cacheWrite: 18.75 },
  "claude-sonnet-4": { cachedInput: 0.3, cacheWrite: 3.75 },
  "claude-haiku-4": { cachedInput: 0.1, cacheWrite: 1.25 },
  "claude-3-5-haiku": { cachedInput: 0.08, cacheWrite: 1 },
  "gemini-2.5-pro": { cachedInput: 0.31 },
  "gemini-2.5-flash": { cachedInput: 0.075 },
  "gemini-2.0-flash": { cachedInput: 0.025 },
  "deepseek-chat": { cachedInput: 0.028 },
  "deepseek-reasoner": { cachedInput: 0.028 },
};

/** Context window used when nothing is known about a model. */
export const DEFAULT_CONTEXT_WINDOW = 32_768;

/** Looks up a model id (without provider prefix, or with an OpenRouter-style `vendor/` prefix). */
export function lookupModel(modelId: string): CatalogEntry | undefined {
  const id = modelId.includes("/") ? modelId.slice(modelId.lastIndexOf("/") + 1) : modelId;
  let best: CatalogEntry | undefined;
  let bestLength = -1;
  let bestPrefix = "";
  for (const [prefix, entry] of catalog) {
    if (id.startsWith(prefix) && prefix.length > bestLength) {
      best = entry;
      bestLength = prefix.length;
      bestPrefix = prefix;
    }
  }
  if (!best) {
    const kinds = inputKindsOf(id);
    return kinds ? { contextWindow: DEFAULT_CONTEXT_WINDOW, input: kinds } : undefined;
  }
  const input = inputKindsOf(id) ?? TEXT_ONLY;
  const cache = cachePrices[bestPrefix];
  if (best.pricing && cache) return { ...best, input, pricing: { ...best.pricing, ...cache } };
  return { ...best, input };
}

/** Models offered in pickers for each built-in provider before (or without) asking the provider. */
const suggested: Record<string, readonly string[]> = {
  openai: ["gpt-5", "gpt-5-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-4o", "gpt-4o-mini", "o3", "o4-mini"],
  anthropic: ["claude-opus-4-1", "claude-sonnet-4-5", "claude-haiku-4-5", "claude-3-5-haiku-latest"],
  gemini: ["gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.0-flash"],
  deepseek: ["deepseek-chat", "deepseek-reasoner"],
  qwen: ["qwen-max", "qwen-plus", "qwen-turbo", "qwen3-coder-plus"],
  kimi: ["kimi-k2-0905-preview", "moonshot-v1-128k", "moonshot-v1-32k", "moonshot-v1-8k"],
  glm: ["glm-4.5", "glm-4-plus", "glm-4-flash"],
  minimax: ["MiniMax-M2", "MiniMax-M1", "MiniMax-Text-01"],
  xai: ["grok-4", "grok-3", "grok-3-mini"],
  perplexity: ["sonar", "sonar-pro", "sonar-reasoning"],
  ollama: ["llama3.1", "qwen2.5"],
};

/** The catalogue's suggested model ids of a provider (none for providers it does not know). */
export function catalogModels(provider: string): readonly string[] {
  return suggested[provider] ?? [];
}
