/** The shapes shared by the web_search tool and its engines. */

/** One hit: what a person would see on a results page. */
export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

export interface EngineSearchOptions {
  /** The caller slices to this too; engines that can limit server-side pass it on. */
  maxResults: number;
  /** Aborts the request: the user stopped the run, or the engine's time ran out. */
  signal: AbortSignal;
}

/** A search backend. `search` throws a DimsumError naming the cause when the engine cannot answer. */
export interface SearchEngine {
  /** Built-in engines use an EngineName; plugged-in ones any short id. */
  name: string;
  search(query: string, options: EngineSearchOptions): Promise<SearchResult[]>;
}

/** The engines Dimsum knows, in the order used when nothing else is configured. */
export const ENGINE_NAMES = [
  "searxng",
  "brave",
  "tavily",
  "perplexity",
  "kimi",
  "grok",
  "duckduckgo",
] as const;

export type EngineName = (typeof ENGINE_NAMES)[number];

/** An entry of DIMSUM_SEARCH_ENGINES: an engine, or `auto` (the default order at that place). */
export type EngineListEntry = EngineName | "auto";

/** How engines are shown to people and models. */
export const ENGINE_LABELS: Record<EngineName, string> = {
  searxng: "SearXNG",
  brave: "Brave Search",
  tavily: "Tavily",
  perplexity: "Perplexity",
  kimi: "Kimi",
  grok: "Grok",
  duckduckgo: "DuckDuckGo",
};

/** The display name of an engine id. */
export function engineLabel(name: string): string {
  return (ENGINE_LABELS as Record<string, string | undefined>)[name] ?? name;
}

/** Limits every engine's HTTP request shares. */
export interface EngineHttpOptions {
  /** Largest response body accepted, in bytes (default 2 MiB). */
  maxBytes?: number;
}

export interface SearxngConfig extends EngineHttpOptions {
  /** The instance root, e.g. http://localhost:8080; `/search` is appended. */
  baseUrl: string;
}

export interface BraveConfig extends EngineHttpOptions {
  apiKey: string;
  /** Default https://api.search.brave.com; `/res/v1/web/search` is appended. */
  baseUrl?: string;
}

export interface TavilyConfig extends EngineHttpOptions {
  apiKey: string;
  /** Default https://api.tavily.com; `/search` is appended. */
  baseUrl?: string;
}

export interface DuckDuckGoConfig extends EngineHttpOptions {
  /** Default https://html.duckduckgo.com; `/html/` is appended. */
  baseUrl?: string;
}

/** Everything web_search needs, resolved once at the edge (see `webSearchConfigFromEnv`). */
export interface WebSearchConfig {
  /** Engines to try, in order (`auto`: the default order there). Default: the keyed engines, then DuckDuckGo. */
  engines?: EngineListEntry[];
  searxng?: { baseUrl?: string };
  brave?: { apiKey?: string; baseUrl?: string };
  tavily?: { apiKey?: string; baseUrl?: string };
  /** Perplexity's Search API (PERPLEXITY_API_KEY). */
  perplexity?: { apiKey?: string; baseUrl?: string };
  /** Kimi's `$web_search` builtin (MOONSHOT_API_KEY, the `kimi:` provider's key). */
  kimi?: { apiKey?: string; baseUrl?: string };
  /** xAI's live search (XAI_API_KEY, the `xai:` provider's key). */
  grok?: { apiKey?: string; baseUrl?: string };
  duckduckgo?: { baseUrl?: string };
  /** Time one engine gets before the next is tried (default 10 s). */
  engineTimeoutMs?: number;
  /** Largest response body accepted from an engine (default 2 MiB). */
  maxResponseBytes?: number;
  /** How long results are reused for the same query (default 5 min; 0 turns the cache off). */
  cacheTtlMs?: number;
  /** Most queries kept in the cache (default 100). */
  cacheMaxEntries?: number;
  /** Cool-down after a 429 that carries no usable Retry-After (default 60 s). */
  rateLimitCooldownMs?: number;
  /** Longest cool-down honoured, whatever Retry-After says (default 1 h). */
  maxCooldownMs?: number;
  /** Clock for cache expiry and cool-downs; tests pass a fake one. */
  now?: () => number;
}
