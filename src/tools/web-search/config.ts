/** Turns environment settings into a WebSearchConfig, and a config into the engines to try. */
import { DimsumError } from "../../errors.js";
import { misconfigured } from "./engine-error.js";
import { createBraveEngine } from "./engines/brave.js";
import { createDuckDuckGoEngine } from "./engines/duckduckgo.js";
import { createGrokEngine } from "./engines/grok.js";
import { createKimiEngine } from "./engines/kimi.js";
import { createPerplexityEngine } from "./engines/perplexity.js";
import { createSearxngEngine } from "./engines/searxng.js";
import { createTavilyEngine } from "./engines/tavily.js";
import {
  ENGINE_NAMES,
  type EngineListEntry,
  type EngineName,
  type SearchEngine,
  type WebSearchConfig,
} from "./types.js";

export type SearchEnv = Readonly<Record<string, string | undefined>>;

const ALIASES: Record<string, EngineName> = {
  searxng: "searxng",
  searx: "searxng",
  brave: "brave",
  tavily: "tavily",
  perplexity: "perplexity",
  kimi: "kimi",
  moonshot: "kimi",
  grok: "grok",
  xai: "grok",
  duckduckgo: "duckduckgo",
  ddg: "duckduckgo",
};

function setting(env: SearchEnv, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

/**
 * Parses a comma-separated engine list (`auto` stands for the default order at its place); throws a
 * config error naming any unknown engine.
 */
export function parseEngineList(text: string): EngineListEntry[] {
  const names: EngineListEntry[] = [];
  for (const raw of text.split(",")) {
    const word = raw.trim().toLowerCase();
    if (word === "") continue;
    if (word === "auto") {
      if (!names.includes("auto")) names.push("auto");
      continue;
    }
    const name = ALIASES[word];
    if (!name) {
      throw new DimsumError("config", `Unknown search engine "${raw.trim()}" in DIMSUM_SEARCH_ENGINES.`, {
        hint: `use a comma-separated list of ${ENGINE_NAMES.join(", ")} and auto`,
      });
    }
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

/**
 * Reads DIMSUM_SEARCH_ENGINES (order), SEARXNG_URL, BRAVE_API_KEY, TAVILY_API_KEY and the
 * BRAVE_BASE_URL / TAVILY_BASE_URL / DUCKDUCKGO_BASE_URL overrides.
 */
export function webSearchConfigFromEnv(env: SearchEnv): WebSearchConfig {
  const config: WebSearchConfig = {};
  const order = setting(env, "DIMSUM_SEARCH_ENGINES");
  if (order) {
    const engines = parseEngineList(order);
    if (engines.length > 0) config.engines = engines;
  }
  const searxngUrl = setting(env, "SEARXNG_URL");
  if (searxngUrl) config.searxng = { baseUrl: searxngUrl };
  const braveKey = setting(env, "BRAVE_API_KEY");
  const braveBase = setting(env, "BRAVE_BASE_URL");
  if (braveKey || braveBase) {
    config.brave = {
      ...(braveKey ? { apiKey: braveKey } : {}),
      ...(braveBase ? { baseUrl: braveBase } : {}),
    };
  }
  const tavilyKey = setting(env, "TAVILY_API_KEY");
  const tavilyBase = setting(env, "TAVILY_BASE_URL");
  if (tavilyKey || tavilyBase) {
    config.tavily = {
      ...(tavilyKey ? { apiKey: tavilyKey } : {}),
      ...(tavilyBase ? { baseUrl: tavilyBase } : {}),
    };
  }
  for (const [engine, keyName, baseName] of [
    ["perplexity", "PERPLEXITY_API_KEY", "PERPLEXITY_BASE_URL"],
    ["kimi", "MOONSHOT_API_KEY", "MOONSHOT_BASE_URL"],
    ["grok", "XAI_API_KEY", "XAI_BASE_URL"],
  ] as const) {
    const apiKey = setting(env, keyName);
    const baseUrl = setting(env, baseName);
    if (apiKey || baseUrl)
      config[engine] = { ...(apiKey ? { apiKey } : {}), ...(baseUrl ? { baseUrl } : {}) };
  }
  const ddgBase = setting(env, "DUCKDUCKGO_BASE_URL");
  if (ddgBase) config.duckduckgo = { baseUrl: ddgBase };
  return config;
}

/** The default order: engines the user set up (SearXNG, Brave, Tavily), then keyless DuckDuckGo. */
export function defaultEngineOrder(config: WebSearchConfig): EngineName[] {
  const order: EngineName[] = [];
  if (config.searxng?.baseUrl) order.push("searxng");
  if (config.brave?.apiKey) order.push("brave");
  if (config.tavily?.apiKey) order.push("tavily");
  // Kimi and Grok search through a model (their keys are LLM keys): only when named.
  if (config.perplexity?.apiKey) order.push("perplexity");
  order.push("duckduckgo");
  return order;
}

/** The engines to try, `auto` in the configured list expanded to the default order (no repeats). */
export function engineOrder(config: WebSearchConfig): EngineName[] {
  const listed = config.engines && config.engines.length > 0 ? config.engines : ["auto" as const];
  const order: EngineName[] = [];
  for (const entry of listed) {
    for (const name of entry === "auto" ? defaultEngineOrder(config) : [entry]) {
      if (!order.includes(name)) order.push(name);
    }
  }
  return order;
}

/** An engine that cannot run as configured; failover reports its reason and moves on. */
function unusableEngine(name: EngineName, error: unknown): SearchEngine {
  return {
    name,
    search: () => Promise.reject(error),
  };
}

function buildEngine(name: EngineName, config: WebSearchConfig): SearchEngine {
  const maxBytes = config.maxResponseBytes === undefined ? {} : { maxBytes: config.maxResponseBytes };
  switch (name) {
    case "searxng": {
      const baseUrl = config.searxng?.baseUrl;
      if (!baseUrl) throw misconfigured("SearXNG has no address configured.", "set SEARXNG_URL");
      return createSearxngEngine({ baseUrl, ...maxBytes });
    }
    case "brave": {
      const apiKey = config.brave?.apiKey;
      if (!apiKey) throw misconfigured("Brave Search has no API key configured.", "set BRAVE_API_KEY");
      const baseUrl = config.brave?.baseUrl;
      return createBraveEngine({ apiKey, ...(baseUrl ? { baseUrl } : {}), ...maxBytes });
    }
    case "tavily": {
      const apiKey = config.tavily?.apiKey;
      if (!apiKey) throw misconfigured("Tavily has no API key configured.", "set TAVILY_API_KEY");
      const baseUrl = config.tavily?.baseUrl;
      return createTavilyEngine({ apiKey, ...(baseUrl ? { baseUrl } : {}), ...maxBytes });
    }
    case "perplexity": {
      const apiKey = config.perplexity?.apiKey;
      if (!apiKey) {
        throw misconfigured(
          "Perplexity has no API key configured.",
          "set PERPLEXITY_API_KEY, or save the perplexity key in Settings → Providers",
        );
      }
      const baseUrl = config.perplexity?.baseUrl;
      return createPerplexityEngine({ apiKey, ...(baseUrl ? { baseUrl } : {}), ...maxBytes });
    }
    case "kimi": {
      const apiKey = config.kimi?.apiKey;
      if (!apiKey) {
        throw misconfigured(
          "Kimi has no API key configured.",
          "set MOONSHOT_API_KEY, or save the kimi key in Settings → Providers",
        );
      }
      const baseUrl = config.kimi?.baseUrl;
      return createKimiEngine({ apiKey, ...(baseUrl ? { baseUrl } : {}), ...maxBytes });
    }
    case "grok": {
      const apiKey = config.grok?.apiKey;
      if (!apiKey) {
        throw misconfigured(
          "Grok has no API key configured.",
          "set XAI_API_KEY, or save the xai key in Settings → Providers",
        );
      }
      const baseUrl = config.grok?.baseUrl;
      return createGrokEngine({ apiKey, ...(baseUrl ? { baseUrl } : {}), ...maxBytes });
    }
    case "duckduckgo": {
      const baseUrl = config.duckduckgo?.baseUrl;
      return createDuckDuckGoEngine({ ...(baseUrl ? { baseUrl } : {}), ...maxBytes });
    }
  }
}

/**
 * The engines to try, in order. A misconfigured engine (missing key, non-http URL) is kept as
 * one that always fails with the reason, so the tool output tells the user what to fix.
 */
export function createEngines(config: WebSearchConfig): SearchEngine[] {
  const order = engineOrder(config);
  return order.map((name) => {
    try {
      return buildEngine(name, config);
    } catch (err) {
      return unusableEngine(name, err);
    }
  });
}

/** Every secret in the config (API keys, URL passwords), to scrub from anything shown. */
export function configSecrets(config: WebSearchConfig): string[] {
  const secrets = [
    config.brave?.apiKey,
    config.tavily?.apiKey,
    config.perplexity?.apiKey,
    config.kimi?.apiKey,
    config.grok?.apiKey,
  ];
  for (const raw of [
    config.searxng?.baseUrl,
    config.brave?.baseUrl,
    config.tavily?.baseUrl,
    config.perplexity?.baseUrl,
    config.kimi?.baseUrl,
    config.grok?.baseUrl,
    config.duckduckgo?.baseUrl,
  ]) {
    if (!raw) continue;
    try {
      const url = new URL(raw);
      if (url.password) secrets.push(url.password, decodeURIComponent(url.password));
    } catch {
      // An unparsable URL is reported by its engine; it has no password to hide.
    }
  }
  return secrets.filter((s): s is string => typeof s === "string" && s.length >= 4);
}
