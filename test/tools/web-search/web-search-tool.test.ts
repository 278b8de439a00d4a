/** web_search end to end against the fake engines: order, failover, cool-downs, cache, secrets, abort. */
import { tmpdir } from "node:os";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeSearchEngines, startFakeSearchEngines } from "../../../src/testing/fake-search-engines.js";
import type { ToolResult, ZodTool } from "../../../src/tools/types.js";
import {
  createWebSearchTool,
  type SearchEngine,
  type WebSearchConfig,
  type WebSearchData,
} from "../../../src/tools/web-search/index.js";
import { makeContext, runTool, textOf } from "../builtin/context.js";

let fake: FakeSearchEngines;

beforeAll(async () => {
  fake = await startFakeSearchEngines();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => fake.reset());

/** A clock tests move by hand. */
function manualClock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

function allEngines(overrides: WebSearchConfig = {}): WebSearchConfig {
  return {
    searxng: { baseUrl: fake.baseUrls.searxng },
    brave: { apiKey: fake.braveKey, baseUrl: fake.baseUrls.brave },
    tavily: { apiKey: fake.tavilyKey, baseUrl: fake.baseUrls.tavily },
    duckduckgo: { baseUrl: fake.baseUrls.duckduckgo },
    ...overrides,
  };
}

function search(tool: ZodTool, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolResult> {
  return runTool(tool, args, makeContext(tmpdir(), signal ? { signal } : {}));
}

const dataOf = (result: ToolResult) => result.data as WebSearchData;

describe("web_search", () => {
  it("asks the configured engines in default order and renders a numbered list", async () => {
    const tool = createWebSearchTool(allEngines());
    const result = await search(tool, { query: "vitest mocking", maxResults: 2 });
    expect(result.isError).toBeUndefined();
    expect(textOf(result)).toBe(
      [
        'Search results for "vitest mocking" from SearXNG, 2 results:',
        "",
        "1. vitest mocking - searxng result 1",
        "   https://searxng.example.com/page/1?q=vitest%20mocking",
        "   Snippet 1 about vitest mocking from searxng.",
        "",
        "2. vitest mocking - searxng result 2",
        "   https://searxng.example.com/page/2?q=vitest%20mocking",
        "   Snippet 2 about vitest mocking from searxng.",
      ].join("\n"),
    );
    expect(fake.requests.map((r) => r.engine)).toEqual(["searxng"]);
    expect(dataOf(result)).toMatchObject({ engine: "searxng", cached: false, failures: [] });
  });

  it("fails over to the next engine on a 5xx and names both engines", async () => {
    fake.setMode("searxng", { kind: "status", status: 500 });
    const tool = createWebSearchTool(allEngines());
    const text = textOf(await search(tool, { query: "failover" }));
    expect(text).toContain('Search results for "failover" from Brave Search, 5 results:');
    expect(text).toContain("- SearXNG: SearXNG had a server error (HTTP 500)");
    expect(text).toContain("1. failover - brave result 1");
    expect(fake.requests.map((r) => r.engine)).toEqual(["searxng", "brave"]);
  });

  it("fails over when an engine does not answer in time", async () => {
    fake.setMode("searxng", { kind: "slow", delayMs: 30_000 });
    const tool = createWebSearchTool(allEngines({ engineTimeoutMs: 150 }));
    const result = await search(tool, { query: "slow" });
    expect(textOf(result)).toContain("from Brave Search");
    expect(textOf(result)).toContain("SearXNG did not answer within 1 s");
    expect(dataOf(result).failures).toMatchObject([{ engine: "searxng", code: "timeout" }]);
  });

  it("follows DIMSUM_SEARCH_ENGINES-style order and skips misconfigured engines with the fix", async () => {
    const tool = createWebSearchTool({
      engines: ["brave", "duckduckgo", "searxng"],
      duckduckgo: { baseUrl: fake.baseUrls.duckduckgo },
    });
    const text = textOf(await search(tool, { query: "order" }));
    expect(text).toContain("from DuckDuckGo");
    expect(text).toContain("- Brave Search: Brave Search has no API key configured. (set BRAVE_API_KEY)");
    expect(fake.requests.map((r) => r.engine)).toEqual(["duckduckgo"]);
  });

  it("pauses an engine after a 429 for as long as Retry-After says", async () => {
    const clock = manualClock();
    fake.setMode("brave", { kind: "rate_limit", retryAfter: "120" });
    const tool = createWebSearchTool(allEngines({ engines: ["brave", "tavily"], now: clock.now }));

    const first = textOf(await search(tool, { query: "one" }));
    expect(first).toContain("from Tavily");
    expect(first).toContain("Brave Search is rate limiting requests (HTTP 429)");
    expect(fake.count("brave")).toBe(1);

    fake.setMode("brave", { kind: "ok" });
    clock.advance(60_000);
    const second = textOf(await search(tool, { query: "two" }));
    expect(second).toContain("from Tavily");
    expect(second).toContain("Brave Search is paused after rate limiting us (60 s left)");
    expect(fake.count("brave")).toBe(1);

    clock.advance(61_000);
    const third = textOf(await search(tool, { query: "three" }));
    expect(third).toContain("from Brave Search");
    expect(fake.count("brave")).toBe(2);
  });

  it("uses the default cool-down when a 429 has no Retry-After", async () => {
    const clock = manualClock();
    fake.setMode("searxng", { kind: "rate_limit" });
    const tool = createWebSearchTool(
      allEngines({ engines: ["searxng", "duckduckgo"], now: clock.now, rateLimitCooldownMs: 30_000 }),
    );
    await search(tool, { query: "a" });
    clock.advance(29_000);
    await search(tool, { query: "b" });
    expect(fake.count("searxng")).toBe(1);
    clock.advance(2_000);
    await search(tool, { query: "c" });
    expect(fake.count("searxng")).toBe(2);
  });

  it("answers a repeated query from the cache without asking any engine", async () => {
    const clock = manualClock();
    const tool = createWebSearchTool(allEngines({ now: clock.now }));
    await search(tool, { query: "Cache  Me", maxResults: 3 });
    expect(fake.requests).toHaveLength(1);

    const again = await search(tool, { query: "  cache me ", maxResults: 3 });
    expect(fake.requests).toHaveLength(1);
    expect(textOf(again)).toContain("from SearXNG (cached), 3 results:");
    expect(dataOf(again).cached).toBe(true);

    await search(tool, { query: "cache me", maxResults: 4 });
    expect(fake.requests).toHaveLength(2);

    clock.advance(5 * 60_000 + 1);
    await search(tool, { query: "cache me", maxResults: 3 });
    expect(fake.requests).toHaveLength(3);
  });

  it("keeps a bounded number of cached queries", async () => {
    const tool = createWebSearchTool(allEngines({ cacheMaxEntries: 2 }));
    for (const query of ["q1", "q2", "q3"]) await search(tool, { query });
    expect(fake.requests).toHaveLength(3);
    await search(tool, { query: "q3" });
    expect(fake.requests).toHaveLength(3);
    await search(tool, { query: "q1" });
    expect(fake.requests).toHaveLength(4);
  });

  it("does not cache an empty answer", async () => {
    fake.setMode("searxng", { kind: "empty" });
    const tool = createWebSearchTool(allEngines());
    const result = await search(tool, { query: "nothing here" });
    expect(result.isError).toBeUndefined();
    expect(textOf(result)).toBe('No results for "nothing here" from SearXNG.');
    await search(tool, { query: "nothing here" });
    expect(fake.count("searxng")).toBe(2);
  });

  it("returns an error listing every engine when all fail", async () => {
    fake.setMode("searxng", { kind: "status", status: 503 });
    fake.setMode("brave", { kind: "rate_limit", retryAfter: "30" });
    fake.setMode("tavily", { kind: "status", status: 500 });
    fake.setMode("duckduckgo", { kind: "blocked" });
    const tool = createWebSearchTool(allEngines());
    const result = await search(tool, { query: "doomed" });
    expect(result.isError).toBe(true);
    const lines = textOf(result).split("\n");
    expect(lines[0]).toBe('Web search for "doomed" failed: no search engine answered.');
    expect(lines[1]).toMatch(/^- SearXNG: .*HTTP 503/);
    expect(lines[2]).toMatch(/^- Brave Search: .*HTTP 429/);
    expect(lines[3]).toMatch(/^- Tavily: .*HTTP 500/);
    expect(lines[4]).toMatch(/^- DuckDuckGo: .*bot challenge/);
    expect(dataOf(result).failures.map((f) => f.engine)).toEqual([
      "searxng",
      "brave",
      "tavily",
      "duckduckgo",
    ]);
  });

  it("never shows API keys or URL passwords, even when an engine echoes them", async () => {
    fake.setMode("brave", { kind: "status", status: 400, body: `bad token ${fake.braveKey}` });
    fake.setMode("tavily", { kind: "status", status: 500, body: `{"detail":"key ${fake.tavilyKey} broke"}` });
    fake.setMode("searxng", { kind: "status", status: 502, body: "proxy error for user:pa55word-xyz" });
    const searxngUrl = fake.baseUrls.searxng.replace("http://", "http://user:pa55word-xyz@");
    const tool = createWebSearchTool(allEngines({ searxng: { baseUrl: searxngUrl } }));
    const result = await search(tool, { query: "secrets" });
    const shown = `${textOf(result)}\n${JSON.stringify(result.data)}`;
    expect(shown).toContain("from DuckDuckGo");
    for (const secret of [fake.braveKey, fake.tavilyKey, "pa55word-xyz"]) expect(shown).not.toContain(secret);
    expect(shown).toContain("bad token ***");
    // The password still reached SearXNG, as Basic auth rather than in the URL.
    const basic = Buffer.from("user:pa55word-xyz").toString("base64");
    expect(fake.requests.find((r) => r.engine === "searxng")?.headers.authorization).toBe(`Basic ${basic}`);
  });

  it("respects maxResults even for engines that cannot limit server-side", async () => {
    const tool = createWebSearchTool(allEngines({ engines: ["searxng"] }));
    const text = textOf(await search(tool, { query: "limits", maxResults: 7 }));
    expect(text.match(/^\d+\. /gm)).toHaveLength(7);
    const byDefault = textOf(await search(tool, { query: "default limit" }));
    expect(byDefault.match(/^\d+\. /gm)).toHaveLength(5);
    expect(() => tool.parameters.parse({ query: "x", maxResults: 21 })).toThrow();
    expect(() => tool.parameters.parse({ query: "   " })).toThrow();
  });

  it("stops at the user's abort without trying the remaining engines", async () => {
    fake.setMode("searxng", { kind: "slow", delayMs: 30_000 });
    const controller = new AbortController();
    const tool = createWebSearchTool(allEngines());
    const pending = search(tool, { query: "abort me" }, controller.signal);
    for (let i = 0; i < 500 && fake.count("searxng") === 0; i++) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe("The web search was aborted.");
    expect(fake.requests.map((r) => r.engine)).toEqual(["searxng"]);
  });

  it("takes plugged-in engines", async () => {
    const mine: SearchEngine = {
      name: "intranet",
      search: async (query, { maxResults }) =>
        Array.from({ length: maxResults }, (_, i) => ({
          title: `${query} ${i}`,
          url: `https://intra.example/${i}`,
          snippet: "",
        })),
    };
    const broken: SearchEngine = { name: "flaky", search: () => Promise.reject(new Error("socket hang up")) };
    const tool = createWebSearchTool({}, { engines: [broken, mine] });
    const text = textOf(await search(tool, { query: "wiki", maxResults: 2 }));
    expect(text).toContain('Search results for "wiki" from intranet, 2 results:');
    expect(text).toContain("- flaky: socket hang up");
    expect(text).toContain("2. wiki 1\n   https://intra.example/1");
  });
});
