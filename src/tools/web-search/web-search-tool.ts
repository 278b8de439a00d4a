/**
 * web_search: asks the configured engines in order, fails over when one errors, times out or is
 * rate limited, and reuses recent answers. The output names the engine that answered and those
 * that failed before it; API keys never appear in it.
 */
import * as z from "zod";
import { toDimsumError } from "../../errors.js";
import { defineTool, type ToolResult, type ZodTool } from "../types.js";
import { cacheKey, SearchCache } from "./cache.js";
import { configSecrets, createEngines } from "./config.js";
import { Cooldowns, type EngineFailure, searchWithFailover } from "./failover.js";
import { redact, renderAllFailed, renderResults } from "./render.js";
import type { SearchEngine, SearchResult, WebSearchConfig } from "./types.js";

const DEFAULTS = {
  engineTimeoutMs: 10_000,
  cacheTtlMs: 5 * 60_000,
  cacheMaxEntries: 100,
  rateLimitCooldownMs: 60_000,
  maxCooldownMs: 60 * 60_000,
};

/** What the tool keeps in `data` for programs (UI, traces). */
export interface WebSearchData {
  query: string;
  engine: string | undefined;
  cached: boolean;
  failures: EngineFailure[];
  results: SearchResult[];
}

export interface WebSearchToolOptions {
  /** Engines to use instead of those built from the config (plugged-in backends, tests). */
  engines?: SearchEngine[];
}

const webSearchParams = z.object({
  query: z
    .string()
    .trim()
    .min(1)
    .max(400)
    .describe("What to search for, as you would type it into a search box"),
  maxResults: z
    .number()
    .int()
    .min(1)
    .max(20)
    .default(5)
    .describe("How many results to return (1-20, default 5)"),
});

/** Builds web_search over the engines `config` describes (or `options.engines`). */
export function createWebSearchTool(
  config: WebSearchConfig = {},
  options: WebSearchToolOptions = {},
): ZodTool {
  const now = config.now ?? Date.now;
  const engines = options.engines ?? createEngines(config);
  const secrets = configSecrets(config);
  const cache = new SearchCache(
    config.cacheTtlMs ?? DEFAULTS.cacheTtlMs,
    config.cacheMaxEntries ?? DEFAULTS.cacheMaxEntries,
    now,
  );
  const cooldowns = new Cooldowns(
    now,
    config.rateLimitCooldownMs ?? DEFAULTS.rateLimitCooldownMs,
    config.maxCooldownMs ?? DEFAULTS.maxCooldownMs,
  );
  const timeoutMs = config.engineTimeoutMs ?? DEFAULTS.engineTimeoutMs;

  const finish = (text: string, data: WebSearchData, isError = false): ToolResult => {
    const safeData = JSON.parse(redact(JSON.stringify(data), secrets)) as WebSearchData;
    const result: ToolResult = { content: redact(text, secrets), data: safeData };
    if (isError) result.isError = true;
    return result;
  };

  return defineTool({
    name: "web_search",
    // Read-only: run again after a restart interrupted it.
    idempotent: true,
    description:
      "Search the web and get back a numbered list of results (title, URL, snippet). " +
      "Use it to find current information or pages to read; open a result with fetch_url for details.",
    parameters: webSearchParams,
    async execute(args, ctx) {
      const { query, maxResults } = args;
      const key = cacheKey(query, maxResults);
      const hit = cache.get(key);
      if (hit) {
        const data = { query, engine: hit.engine, cached: true, failures: [], results: hit.results };
        return finish(renderResults(query, hit.engine, hit.results, [], true), data);
      }
      try {
        const outcome = await searchWithFailover(engines, query, {
          maxResults,
          signal: ctx.signal,
          timeoutMs,
          cooldowns,
        });
        if (!outcome.ok) {
          const data = { query, engine: undefined, cached: false, failures: outcome.failures, results: [] };
          return finish(renderAllFailed(query, outcome.failures), data, true);
        }
        const results = outcome.results.slice(0, maxResults);
        // An empty answer is not kept: a later try (or another engine) may do better.
        if (results.length > 0) cache.set(key, { engine: outcome.engine, results });
        const data = { query, engine: outcome.engine, cached: false, failures: outcome.failures, results };
        return finish(renderResults(query, outcome.engine, results, outcome.failures, false), data);
      } catch (err) {
        const error = toDimsumError(err, "tool_failed");
        const data = { query, engine: undefined, cached: false, failures: [], results: [] };
        return finish(error.toLine(), data, true);
      }
    },
  });
}
