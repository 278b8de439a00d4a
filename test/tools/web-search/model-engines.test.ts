/**
 * Kimi (`$web_search` builtin), Perplexity (Search API) and Grok (xAI live search) as web_search
 * engines (issue 34, item 14), each against the fake speaking its documented API: named in
 * DIMSUM_SEARCH_ENGINES, keys from the environment (or Settings → Providers), failing over like the
 * others.
 */
import { tmpdir } from "node:os";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DimsumError } from "../../../src/errors.js";
import { openSecretBox } from "../../../src/server/settings/secret-box.js";
import { configWithSettings, type ProviderRow } from "../../../src/server/settings/settings-store.js";
import {
  type FakeSearchEngines,
  fakeHits,
  startFakeSearchEngines,
} from "../../../src/testing/fake-search-engines.js";
import {
  createGrokEngine,
  createKimiEngine,
  createPerplexityEngine,
  createWebSearchTool,
  engineOrder,
  SearchEngineError,
  type WebSearchData,
  webSearchConfigFromEnv,
} from "../../../src/tools/web-search/index.js";
import { makeContext, runTool, textOf } from "../builtin/context.js";

let fake: FakeSearchEngines;
const opts = (maxResults = 3) => ({ maxResults, signal: new AbortController().signal });
const expected = (engine: "kimi" | "perplexity" | "grok", query: string, n: number) =>
  fakeHits(engine, query, n).map((h) => ({ title: h.title, url: h.url, snippet: h.snippet }));

beforeAll(async () => {
  fake = await startFakeSearchEngines();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => fake.reset());

describe("engines that search through their official APIs", () => {
  it("Perplexity: POST /search with the key, results[].title/url/snippet", async () => {
    const engine = createPerplexityEngine({ apiKey: fake.perplexityKey, baseUrl: fake.baseUrls.perplexity });
    expect(await engine.search("tea rooms", opts(3))).toEqual(expected("perplexity", "tea rooms", 3));
    expect(JSON.parse(fake.requests[0]?.body ?? "{}")).toEqual({ query: "tea rooms", max_results: 3 });
    const bad = createPerplexityEngine({ apiKey: "wrong", baseUrl: fake.baseUrls.perplexity });
    const err = await bad.search("x", opts()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SearchEngineError);
    expect((err as SearchEngineError).message).toContain("Perplexity refused the request (HTTP 401)");
  });

  it("Kimi: offers $web_search, echoes the call's arguments back, reads the listed results", async () => {
    const engine = createKimiEngine({ apiKey: fake.kimiKey, baseUrl: fake.baseUrls.kimi });
    expect(await engine.search("dim sum history", opts(4))).toEqual(expected("kimi", "dim sum history", 4));
    expect(fake.count("kimi")).toBe(2);
    const first = JSON.parse(fake.requests[0]?.body ?? "{}") as { tools: unknown[] };
    expect(first.tools).toEqual([{ type: "builtin_function", function: { name: "$web_search" } }]);
    const second = JSON.parse(fake.requests[1]?.body ?? "{}") as { messages: Array<{ role: string }> };
    expect(second.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    expect(fake.requests[0]?.headers.authorization).toBe(`Bearer ${fake.kimiKey}`);
  });

  it("Grok: asks for live search on the web and reads the listed results", async () => {
    const engine = createGrokEngine({ apiKey: fake.xaiKey, baseUrl: fake.baseUrls.grok });
    expect(await engine.search("har gow", opts(2))).toEqual(expected("grok", "har gow", 2));
    const body = JSON.parse(fake.requests[0]?.body ?? "{}") as { search_parameters: unknown };
    expect(body.search_parameters).toMatchObject({
      mode: "on",
      sources: [{ type: "web" }],
      max_search_results: 2,
    });
  });
});

describe("configuration and failover", () => {
  it("knows kimi, perplexity, grok and auto in DIMSUM_SEARCH_ENGINES, with their keys from the environment", () => {
    const config = webSearchConfigFromEnv({
      DIMSUM_SEARCH_ENGINES: "kimi,perplexity,grok,auto",
      MOONSHOT_API_KEY: "mk",
      PERPLEXITY_API_KEY: "pk",
      XAI_API_KEY: "xk",
      BRAVE_API_KEY: "bk",
    });
    expect(config).toMatchObject({
      kimi: { apiKey: "mk" },
      perplexity: { apiKey: "pk" },
      grok: { apiKey: "xk" },
    });
    // auto: the default order (keyed engines, then DuckDuckGo), without repeating what is named.
    expect(engineOrder(config)).toEqual(["kimi", "perplexity", "grok", "brave", "duckduckgo"]);
    expect(() => webSearchConfigFromEnv({ DIMSUM_SEARCH_ENGINES: "bing" })).toThrow(DimsumError);
  });

  it("fails over from a rate-limited Grok to Kimi, then to Perplexity when Kimi is down", async () => {
    const tool = createWebSearchTool({
      engines: ["grok", "kimi", "perplexity"],
      grok: { apiKey: fake.xaiKey, baseUrl: fake.baseUrls.grok },
      kimi: { apiKey: fake.kimiKey, baseUrl: fake.baseUrls.kimi },
      perplexity: { apiKey: fake.perplexityKey, baseUrl: fake.baseUrls.perplexity },
    });
    fake.setMode("grok", { kind: "rate_limit", retryAfter: "30" });
    const first = await runTool(tool, { query: "siu mai", maxResults: 2 }, makeContext(tmpdir()));
    expect((first.data as WebSearchData).engine).toBe("kimi");
    expect(textOf(first)).toContain("from Kimi");
    expect(textOf(first)).toContain("https://kimi.example.com/page/1");

    fake.setMode("kimi", { kind: "status", status: 503 });
    const second = await runTool(tool, { query: "char siu bao", maxResults: 2 }, makeContext(tmpdir()));
    expect((second.data as WebSearchData).engine).toBe("perplexity");
    expect(JSON.stringify(second)).not.toContain(fake.kimiKey);
  });

  it("takes the engines' keys saved in Settings → Providers", () => {
    const box = openSecretBox(tmpdir(), { key: Buffer.alloc(32, 7).toString("base64") });
    const rows: ProviderRow[] = [
      {
        name: "kimi",
        base_url: null,
        protocol: "openai",
        api_key_enc: box.seal("saved-kimi"),
        key_preview: null,
      },
      {
        name: "xai",
        base_url: null,
        protocol: "openai",
        api_key_enc: box.seal("saved-xai"),
        key_preview: null,
      },
      {
        name: "perplexity",
        base_url: null,
        protocol: "openai",
        api_key_enc: box.seal("saved-pplx"),
        key_preview: null,
      },
    ];
    const base = { env: {}, webSearch: { engines: ["grok" as const] }, file: { providers: {} } };
    const effective = configWithSettings(base as never, undefined, rows, box);
    expect(effective.webSearch).toMatchObject({
      engines: ["grok"],
      kimi: { apiKey: "saved-kimi" },
      grok: { apiKey: "saved-xai" },
      perplexity: { apiKey: "saved-pplx" },
    });
  });
});
