/** Reading the environment and turning a config into engines. */
import { describe, expect, it } from "vitest";
import { DimsumError } from "../../../src/errors.js";
import {
  createEngines,
  defaultEngineOrder,
  webSearchConfigFromEnv,
} from "../../../src/tools/web-search/index.js";

const signal = new AbortController().signal;

describe("webSearchConfigFromEnv", () => {
  it("reads engines, order, keys and base URL overrides; blank values count as unset", () => {
    const config = webSearchConfigFromEnv({
      DIMSUM_SEARCH_ENGINES: " Tavily, ddg,brave, tavily ",
      SEARXNG_URL: "http://10.0.0.5:8888",
      BRAVE_API_KEY: "bk",
      TAVILY_API_KEY: "tk",
      TAVILY_BASE_URL: "http://proxy.local/tavily",
      BRAVE_BASE_URL: "  ",
      DUCKDUCKGO_BASE_URL: "http://127.0.0.1:9/ddg",
    });
    expect(config).toEqual({
      engines: ["tavily", "duckduckgo", "brave"],
      searxng: { baseUrl: "http://10.0.0.5:8888" },
      brave: { apiKey: "bk" },
      tavily: { apiKey: "tk", baseUrl: "http://proxy.local/tavily" },
      duckduckgo: { baseUrl: "http://127.0.0.1:9/ddg" },
    });
  });

  it("rejects an unknown engine name with a config error listing the known ones", () => {
    let caught: unknown;
    try {
      webSearchConfigFromEnv({ DIMSUM_SEARCH_ENGINES: "brave,googel" });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(DimsumError);
    expect((caught as DimsumError).code).toBe("config");
    expect((caught as DimsumError).toLine()).toMatch(
      /googel.*searxng, brave, tavily, perplexity, kimi, grok, duckduckgo and auto/,
    );
  });

  it("an empty environment means DuckDuckGo only", () => {
    const config = webSearchConfigFromEnv({});
    expect(config).toEqual({});
    expect(createEngines(config).map((e) => e.name)).toEqual(["duckduckgo"]);
  });
});

describe("engine order", () => {
  it("defaults to the configured keyed engines first, then DuckDuckGo", () => {
    expect(defaultEngineOrder({ tavily: { apiKey: "t" }, searxng: { baseUrl: "http://s" } })).toEqual([
      "searxng",
      "tavily",
      "duckduckgo",
    ]);
    expect(defaultEngineOrder({ brave: { baseUrl: "http://b" } })).toEqual(["duckduckgo"]);
  });

  it("keeps misconfigured engines in an explicit order; they fail with what to set", async () => {
    const engines = createEngines({
      engines: ["brave", "searxng", "tavily"],
      tavily: { apiKey: "tk", baseUrl: "file:///etc/passwd" },
    });
    expect(engines.map((e) => e.name)).toEqual(["brave", "searxng", "tavily"]);
    const reasons = await Promise.all(
      engines.map((e) =>
        e.search("q", { maxResults: 1, signal }).then(
          () => "answered",
          (err: DimsumError) => `${err.code}: ${err.toLine()}`,
        ),
      ),
    );
    expect(reasons[0]).toMatch(/^config: .*BRAVE_API_KEY/);
    expect(reasons[1]).toMatch(/^config: .*SEARXNG_URL/);
    expect(reasons[2]).toMatch(/^config: .*TAVILY_BASE_URL/);
  });
});
