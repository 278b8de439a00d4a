/** Each engine against the fake server speaking that engine's documented format. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DimsumError } from "../../../src/errors.js";
import {
  type FakeSearchEngines,
  fakeHits,
  startFakeSearchEngines,
} from "../../../src/testing/fake-search-engines.js";
import {
  createBraveEngine,
  createDuckDuckGoEngine,
  createSearxngEngine,
  createTavilyEngine,
  SearchEngineError,
} from "../../../src/tools/web-search/index.js";

let fake: FakeSearchEngines;
const opts = (maxResults = 5) => ({ maxResults, signal: new AbortController().signal });

beforeAll(async () => {
  fake = await startFakeSearchEngines();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => fake.reset());

async function rejection(promise: Promise<unknown>): Promise<SearchEngineError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SearchEngineError);
  return err as SearchEngineError;
}

describe("SearXNG", () => {
  it("asks /search with format=json and maps results[].title/url/content, cutting to maxResults", async () => {
    const engine = createSearxngEngine({ baseUrl: fake.baseUrls.searxng });
    const results = await engine.search("rust async", opts(3));
    expect(results).toEqual(
      fakeHits("searxng", "rust async", 3).map((h) => ({ title: h.title, url: h.url, snippet: h.snippet })),
    );
    const [req] = fake.requests;
    expect(req?.method).toBe("GET");
    expect(req?.params).toMatchObject({ q: "rust async", format: "json" });
  });

  it("keeps a base path prefix and tolerates a trailing slash", async () => {
    const engine = createSearxngEngine({ baseUrl: `${fake.baseUrls.searxng}/` });
    await engine.search("x", opts());
    expect(fake.requests[0]?.path.startsWith("/searxng/search?")).toBe(true);
  });

  it("reports a 5xx as an unavailable engine", async () => {
    fake.setMode("searxng", { kind: "status", status: 502 });
    const err = await rejection(createSearxngEngine({ baseUrl: fake.baseUrls.searxng }).search("x", opts()));
    expect(err.code).toBe("provider_unavailable");
    expect(err.message).toContain("HTTP 502");
  });

  it("refuses a non-http base URL at construction", () => {
    expect(() => createSearxngEngine({ baseUrl: "ftp://searx.local" })).toThrow(/http or https/);
    expect(() => createSearxngEngine({ baseUrl: "not a url" })).toThrow(DimsumError);
  });
});

describe("Brave Search", () => {
  it("sends the token header and count, and cleans <strong> and entities from descriptions", async () => {
    const engine = createBraveEngine({ apiKey: fake.braveKey, baseUrl: fake.baseUrls.brave });
    const results = await engine.search("tokio", opts(4));
    expect(results).toHaveLength(4);
    expect(results[0]).toEqual({
      title: "tokio - brave result 1",
      url: "https://brave.example.com/page/1?q=tokio",
      snippet: "Snippet 1 about tokio from brave. It's #1.",
    });
    const [req] = fake.requests;
    expect(req?.headers["x-subscription-token"]).toBe(fake.braveKey);
    expect(req?.params).toMatchObject({ q: "tokio", count: "4" });
  });

  it("turns a 401 for a wrong key into an auth error with Brave's own message", async () => {
    const engine = createBraveEngine({ apiKey: "wrong-key", baseUrl: fake.baseUrls.brave });
    const err = await rejection(engine.search("x", opts()));
    expect(err.code).toBe("auth");
    expect(err.message).toContain("The provided subscription token is invalid.");
  });

  it("returns no results when the answer has no web section", async () => {
    fake.setMode("brave", { kind: "empty" });
    const engine = createBraveEngine({ apiKey: fake.braveKey, baseUrl: fake.baseUrls.brave });
    expect(await engine.search("nothing", opts())).toEqual([]);
  });

  it("reads Retry-After from a 429", async () => {
    fake.setMode("brave", { kind: "rate_limit", retryAfter: "7" });
    const engine = createBraveEngine({ apiKey: fake.braveKey, baseUrl: fake.baseUrls.brave });
    const err = await rejection(engine.search("x", opts()));
    expect(err.code).toBe("rate_limit");
    expect(err.retryAfterMs).toBe(7000);
  });
});

describe("Tavily", () => {
  it("POSTs {query, max_results} with a bearer key and maps results[].content", async () => {
    const engine = createTavilyEngine({ apiKey: fake.tavilyKey, baseUrl: fake.baseUrls.tavily });
    const results = await engine.search("zod schemas", opts(2));
    expect(results).toEqual(
      fakeHits("tavily", "zod schemas", 2).map((h) => ({ title: h.title, url: h.url, snippet: h.snippet })),
    );
    const [req] = fake.requests;
    expect(req?.method).toBe("POST");
    expect(req?.headers.authorization).toBe(`Bearer ${fake.tavilyKey}`);
    expect(JSON.parse(req?.body ?? "{}")).toMatchObject({ query: "zod schemas", max_results: 2 });
  });

  it("turns a 401 into an auth error quoting Tavily's detail", async () => {
    const engine = createTavilyEngine({ apiKey: "tvly-wrong", baseUrl: fake.baseUrls.tavily });
    const err = await rejection(engine.search("x", opts()));
    expect(err.code).toBe("auth");
    expect(err.message).toContain("missing or invalid API key");
  });

  it("reports a body that is not JSON", async () => {
    fake.setMode("tavily", { kind: "status", status: 200, body: "<html>maintenance</html>" });
    const engine = createTavilyEngine({ apiKey: fake.tavilyKey, baseUrl: fake.baseUrls.tavily });
    const err = await rejection(engine.search("x", opts()));
    expect(err.message).toContain("not JSON");
  });
});

describe("DuckDuckGo HTML", () => {
  it("parses result links, unwraps uddg redirects, decodes entities and skips the ad", async () => {
    const engine = createDuckDuckGoEngine({ baseUrl: fake.baseUrls.duckduckgo });
    const results = await engine.search("R&D <tips>", opts(10));
    expect(results).toHaveLength(10);
    const expected = fakeHits("duckduckgo", "R&D <tips>", 10);
    results.forEach((r, i) => {
      expect(r.url).toBe(expected[i]?.url);
      expect(r.title).toBe(expected[i]?.title);
      expect(r.snippet).toBe(`${expected[i]?.snippet} Tom & Jerry's “pick” …`);
    });
    expect(results.some((r) => r.url.includes("y.js") || r.title.startsWith("Sponsored"))).toBe(false);
    const [req] = fake.requests;
    expect(req?.method).toBe("POST");
    expect(req?.params.q).toBe("R&D <tips>");
  });

  it("cuts to maxResults", async () => {
    const engine = createDuckDuckGoEngine({ baseUrl: fake.baseUrls.duckduckgo });
    expect(await engine.search("x", opts(3))).toHaveLength(3);
  });

  it("answers an empty list for DuckDuckGo's no-results page", async () => {
    fake.setMode("duckduckgo", { kind: "empty" });
    const engine = createDuckDuckGoEngine({ baseUrl: fake.baseUrls.duckduckgo });
    expect(await engine.search("qwxzv", opts())).toEqual([]);
  });

  it("treats the bot challenge page as rate limiting", async () => {
    fake.setMode("duckduckgo", { kind: "blocked" });
    const engine = createDuckDuckGoEngine({ baseUrl: fake.baseUrls.duckduckgo });
    const err = await rejection(engine.search("x", opts()));
    expect(err.code).toBe("rate_limit");
    expect(err.message).toContain("bot challenge");
  });

  it("reports a page it cannot read instead of claiming nothing was found", async () => {
    fake.setMode("duckduckgo", { kind: "status", status: 200, body: "<html><body>new layout</body></html>" });
    const engine = createDuckDuckGoEngine({ baseUrl: fake.baseUrls.duckduckgo });
    const err = await rejection(engine.search("x", opts()));
    expect(err.message).toContain("without recognisable results");
  });
});

describe("engine HTTP", () => {
  it("refuses a response over the size cap", async () => {
    const engine = createSearxngEngine({ baseUrl: fake.baseUrls.searxng, maxBytes: 200 });
    const err = await rejection(engine.search("big", opts()));
    expect(err.message).toContain("larger than 200 bytes");
  });

  it("reports a connection refused with the address, not the query", async () => {
    const closed = await startFakeSearchEngines();
    const base = closed.baseUrls.searxng;
    await closed.close();
    const err = await rejection(createSearxngEngine({ baseUrl: base }).search("secret words", opts()));
    expect(err.code).toBe("provider_unavailable");
    expect(err.message).toContain("ECONNREFUSED");
    expect(err.message).not.toContain("secret");
  });

  it("stops when the signal aborts", async () => {
    fake.setMode("tavily", { kind: "slow", delayMs: 30_000 });
    const controller = new AbortController();
    const engine = createTavilyEngine({ apiKey: fake.tavilyKey, baseUrl: fake.baseUrls.tavily });
    const pending = engine.search("x", { maxResults: 5, signal: controller.signal });
    await waitFor(() => fake.count("tavily") === 1);
    controller.abort();
    await expect(pending).rejects.toThrow();
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(condition()).toBe(true);
}
