/**
 * Built-in providers, registered by wire protocol: one OpenAI-compatible adapter serves most vendors.
 * Each names the env vars that configure it, so errors can say exactly what to set.
 */
import type { WireProtocol } from "../llm/types.js";

export interface ProviderDefinition {
  name: string;
  protocol: WireProtocol;
  defaultBaseUrl: string;
  /** Env var holding the API key; undefined for providers that need none (Ollama). */
  keyEnv?: string;
  baseUrlEnv: string;
  /** Path the OpenAI-compatible API lives under, appended when a configured base URL lacks it. */
  baseUrlSuffix?: string;
  /** Protocol quirks applied to every model of this provider. */
  quirks?: Record<string, boolean | string | number>;
}

const builtins: ProviderDefinition[] = [
  {
    name: "openai",
    protocol: "openai",
    defaultBaseUrl: "https://api.openai.com/v1",
    keyEnv: "OPENAI_API_KEY",
    baseUrlEnv: "OPENAI_BASE_URL",
  },
  {
    name: "anthropic",
    protocol: "anthropic",
    defaultBaseUrl: "https://api.anthropic.com",
    keyEnv: "ANTHROPIC_API_KEY",
    baseUrlEnv: "ANTHROPIC_BASE_URL",
  },
  {
    name: "gemini",
    protocol: "gemini",
    defaultBaseUrl: "https://generativelanguage.googleapis.com",
    keyEnv: "GEMINI_API_KEY",
    baseUrlEnv: "GEMINI_BASE_URL",
  },
  {
    name: "deepseek",
    protocol: "openai",
    defaultBaseUrl: "https://api.deepseek.com/v1",
    keyEnv: "DEEPSEEK_API_KEY",
    baseUrlEnv: "DEEPSEEK_BASE_URL",
    // JSON mode only: no `json_schema` response format (structured answers are checked by Dimsum).
    quirks: { sendReasoning: true, responseFormat: "json_object" },
  },
  {
    name: "qwen",
    protocol: "openai",
    defaultBaseUrl: "https://dashscope.aliyuncs.com/compatible-mode/v1",
    keyEnv: "DASHSCOPE_API_KEY",
    baseUrlEnv: "DASHSCOPE_BASE_URL",
  },
  {
    name: "kimi",
    protocol: "openai",
    defaultBaseUrl: "https://api.moonshot.cn/v1",
    keyEnv: "MOONSHOT_API_KEY",
    baseUrlEnv: "MOONSHOT_BASE_URL",
    quirks: { responseFormat: "json_object" },
  },
  {
    name: "glm",
    protocol: "openai",
    defaultBaseUrl: "https://open.bigmodel.cn/api/paas/v4",
    keyEnv: "ZHIPU_API_KEY",
    baseUrlEnv: "ZHIPU_BASE_URL",
    quirks: { responseFormat: "json_object" },
  },
  {
    // MiniMax's OpenAI-compatible API (api.minimaxi.com/v1 for accounts in mainland China).
    name: "minimax",
    protocol: "openai",
    defaultBaseUrl: "https://api.minimax.io/v1",
    keyEnv: "MINIMAX_API_KEY",
    baseUrlEnv: "MINIMAX_BASE_URL",
    // Thinking comes apart from the answer (`reasoning_details`), not as <think> tags in the text;
    // no JSON-schema response format (structured answers are checked by Dimsum).
    quirks: { reasoningSplit: true, responseFormat: "json_object" },
  },
  {
    // Grok; its key also serves the `grok` web search engine (live search).
    name: "xai",
    protocol: "openai",
    defaultBaseUrl: "https://api.x.ai/v1",
    keyEnv: "XAI_API_KEY",
    baseUrlEnv: "XAI_BASE_URL",
  },
  {
    // Sonar models; its key also serves the `perplexity` web search engine (Search API).
    name: "perplexity",
    protocol: "openai",
    defaultBaseUrl: "https://api.perplexity.ai",
    keyEnv: "PERPLEXITY_API_KEY",
    baseUrlEnv: "PERPLEXITY_BASE_URL",
    quirks: { responseFormat: "none" },
  },
  {
    name: "openrouter",
    protocol: "openai",
    defaultBaseUrl: "https://openrouter.ai/api/v1",
    keyEnv: "OPENROUTER_API_KEY",
    baseUrlEnv: "OPENROUTER_BASE_URL",
  },
  {
    name: "ollama",
    protocol: "openai",
    defaultBaseUrl: "http://127.0.0.1:11434/v1",
    baseUrlEnv: "OLLAMA_BASE_URL",
    baseUrlSuffix: "/v1",
  },
];

/** Other spellings people use for the same provider. */
const aliases: Record<string, string> = {
  google: "gemini",
  dashscope: "qwen",
  moonshot: "kimi",
  zhipu: "glm",
  claude: "anthropic",
  grok: "xai",
};

/** The built-in provider table, keyed by canonical name. */
export const builtinProviders: ReadonlyMap<string, ProviderDefinition> = new Map(
  builtins.map((p) => [p.name, p]),
);

/** Canonical provider name for an alias (`moonshot` -> `kimi`), or the name itself. */
export function canonicalProviderName(name: string): string {
  const lower = name.toLowerCase();
  return aliases[lower] ?? lower;
}
