/** The web_search tool and its pluggable engines. */
export { cacheKey, SearchCache } from "./cache.js";
export type { SearchEnv } from "./config.js";
export {
  createEngines,
  defaultEngineOrder,
  engineOrder,
  parseEngineList,
  webSearchConfigFromEnv,
} from "./config.js";
export { SearchEngineError } from "./engine-error.js";
export { BRAVE_DEFAULT_BASE_URL, createBraveEngine } from "./engines/brave.js";
export {
  createDuckDuckGoEngine,
  DUCKDUCKGO_DEFAULT_BASE_URL,
  parseDuckDuckGoHtml,
  unwrapDuckDuckGoLink,
} from "./engines/duckduckgo.js";
export { createGrokEngine, GROK_DEFAULT_BASE_URL } from "./engines/grok.js";
export { createKimiEngine, KIMI_DEFAULT_BASE_URL } from "./engines/kimi.js";
export { createPerplexityEngine, PERPLEXITY_DEFAULT_BASE_URL } from "./engines/perplexity.js";
export { createSearxngEngine } from "./engines/searxng.js";
export { createTavilyEngine, TAVILY_DEFAULT_BASE_URL } from "./engines/tavily.js";
export type { EngineFailure, FailoverOptions, FailoverOutcome } from "./failover.js";
export { Cooldowns, searchWithFailover } from "./failover.js";
export type {
  BraveConfig,
  DuckDuckGoConfig,
  EngineName,
  EngineSearchOptions,
  SearchEngine,
  SearchResult,
  SearxngConfig,
  TavilyConfig,
  WebSearchConfig,
} from "./types.js";
export { ENGINE_LABELS, ENGINE_NAMES, engineLabel } from "./types.js";
export type { WebSearchData, WebSearchToolOptions } from "./web-search-tool.js";
export { createWebSearchTool } from "./web-search-tool.js";
