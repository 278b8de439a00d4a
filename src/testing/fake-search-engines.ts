/**
 * Fake search engines for tests: one real HTTP server on 127.0.0.1 serving SearXNG, Brave Search,
 * Tavily, Perplexity's Search API, Kimi's chat completions with the `$web_search` builtin, xAI's chat
 * completions with live search, and DuckDuckGo's HTML endpoint in each one's documented format, each
 * under its own path prefix. Switches make an engine fail (status code, 429 with Retry-After, bot challenge, slow).
 */
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ENGINE_NAMES, type EngineName } from "../tools/web-search/types.js";

/** The fake answers as every built-in engine does. */
export type FakeEngineName = EngineName;

export const FAKE_ENGINE_NAMES: readonly FakeEngineName[] = ENGINE_NAMES;

/** How an engine behaves on its next requests. */
export type FakeEngineMode =
  | { kind: "ok" }
  /** A valid answer with no results (DuckDuckGo shows its "No results" page). */
  | { kind: "empty" }
  | { kind: "status"; status: number; body?: string }
  | { kind: "rate_limit"; retryAfter?: string }
  /** Answers normally after `delayMs`, unless the client gives up first. */
  | { kind: "slow"; delayMs: number }
  /** DuckDuckGo's bot challenge page (HTTP 202); other engines answer 403. */
  | { kind: "blocked" };

export interface FakeSearchRequest {
  engine: FakeEngineName;
  method: string;
  path: string;
  params: Record<string, string>;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface FakeSearchEnginesOptions {
  braveKey?: string;
  tavilyKey?: string;
  perplexityKey?: string;
  kimiKey?: string;
  xaiKey?: string;
  /** How many hits each engine has for any query (default 12; SearXNG always sends all of them). */
  resultCount?: number;
}

export interface FakeSearchEngines {
  /** http://127.0.0.1:<port> */
  origin: string;
  /** The base URL to configure for each engine. */
  baseUrls: Record<FakeEngineName, string>;
  braveKey: string;
  tavilyKey: string;
  perplexityKey: string;
  kimiKey: string;
  xaiKey: string;
  /** Every request received, oldest first. */
  requests: FakeSearchRequest[];
  /** How many requests an engine has received. */
  count(engine: FakeEngineName): number;
  setMode(engine: FakeEngineName, mode: FakeEngineMode): void;
  /** All engines back to "ok" and the request log emptied. */
  reset(): void;
  close(): Promise<void>;
}

interface Hit {
  title: string;
  url: string;
  snippet: string;
}

/** The deterministic hits an engine has for a query. */
export function fakeHits(engine: FakeEngineName, query: string, count: number): Hit[] {
  return Array.from({ length: count }, (_, i) => ({
    title: `${query} - ${engine} result ${i + 1}`,
    url: `https://${engine}.example.com/page/${i + 1}?q=${encodeURIComponent(query)}`,
    snippet: `Snippet ${i + 1} about ${query} from ${engine}.`,
  }));
}

function escapeHtml(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#x27;");
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

function sendHtml(res: ServerResponse, status: number, html: string) {
  res.writeHead(status, { "content-type": "text/html; charset=UTF-8" });
  res.end(html);
}

function braveError(status: number, code: string, detail: string) {
  return { type: "ErrorResponse", error: { id: "fake-error-id", status, code, detail }, time: 1700000000 };
}

function searxngAnswer(query: string, hits: Hit[]) {
  return {
    query,
    number_of_results: hits.length,
    results: hits.map((h, i) => ({
      url: h.url,
      title: h.title,
      content: h.snippet,
      engine: "duckduckgo",
      engines: ["duckduckgo", "brave"],
      parsed_url: ["https", new URL(h.url).host, new URL(h.url).pathname, "", "", ""],
      template: "default.html",
      positions: [i + 1],
      score: 2 / (i + 1),
      category: "general",
    })),
    answers: [],
    corrections: [],
    infoboxes: [],
    suggestions: [],
    unresponsive_engines: [],
  };
}

function braveAnswer(query: string, hits: Hit[]) {
  const answer: Record<string, unknown> = {
    type: "search",
    query: {
      original: query,
      show_strict_warning: false,
      is_navigational: false,
      more_results_available: true,
    },
    mixed: { type: "mixed", main: hits.map((_, i) => ({ type: "web", index: i, all: false })) },
  };
  if (hits.length > 0) {
    answer.web = {
      type: "search",
      family_friendly: true,
      results: hits.map((h, i) => ({
        type: "search_result",
        title: h.title,
        url: h.url,
        is_source_local: false,
        is_source_both: false,
        // Brave highlights query terms with <strong> and escapes text as HTML.
        description: `${escapeHtml(h.snippet.replace(query, "\u0000")).replace(
          "\u0000",
          `<strong>${escapeHtml(query)}</strong>`,
        )} It&#x27;s #${i + 1}.`,
        language: "en",
        family_friendly: true,
        meta_url: { scheme: "https", netloc: new URL(h.url).host, path: new URL(h.url).pathname },
      })),
    };
  }
  return answer;
}

function tavilyAnswer(query: string, hits: Hit[]) {
  return {
    query,
    follow_up_questions: null,
    answer: null,
    images: [],
    results: hits.map((h, i) => ({
      title: h.title,
      url: h.url,
      content: h.snippet,
      score: 0.9 - i * 0.01,
      raw_content: null,
    })),
    response_time: 1.23,
    request_id: "fake-request-id",
  };
}

function perplexityAnswer(hits: Hit[]) {
  return {
    id: "fake-search-id",
    results: hits.map((h) => ({ title: h.title, url: h.url, snippet: h.snippet, date: "2026-01-02" })),
  };
}

/** A chat completion (non-streaming) whose message is `message` and whose finish reason is `finish`. */
function chatCompletion(model: string, message: Record<string, unknown>, finish: string, extra = {}) {
  return {
    id: "chatcmpl-fake",
    object: "chat.completion",
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finish }],
    usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
    ...extra,
  };
}

/** The hits as the `title | url | summary` lines the search engines built on models ask for. */
function resultLines(hits: Hit[]): string {
  return hits.map((h) => `${h.title} | ${h.url} | ${h.snippet}`).join("\n");
}

type ChatBody = {
  model?: unknown;
  messages?: Array<{ role?: string; content?: unknown; tool_call_id?: string; name?: string }>;
  tools?: Array<{ type?: string; function?: { name?: string } }>;
  search_parameters?: { mode?: string; max_search_results?: number };
};

function ddgLink(target: string, rut: boolean): string {
  return `//duckduckgo.com/l/?uddg=${encodeURIComponent(target)}${rut ? "&amp;rut=4f2a9c0e" : ""}`;
}

/** A results page in the markup of html.duckduckgo.com, ad first, attribute order varying. */
function ddgResultsPage(query: string, hits: Hit[]): string {
  const q = escapeHtml(query);
  const ad = `
<div class="result results_links results_links_deep result--ad ">
  <div class="links_main links_deep result__body">
    <h2 class="result__title">
      <a rel="nofollow" class="result__a" href="https://duckduckgo.com/y.js?ad_domain=ads.example&amp;ad_provider=bingv7aa&amp;u3=abc">Sponsored: buy ${q} now</a>
    </h2>
    <a class="result__snippet" href="https://duckduckgo.com/y.js?ad_domain=ads.example">Ad text that is not a result.</a>
  </div>
</div>`;
  const organic = hits.map((h, i) => {
    const title = escapeHtml(h.title).replace(q, `<b>${q}</b>`);
    const snippet = `${escapeHtml(h.snippet).replace(q, `<b>${q}</b>`)} Tom &amp; Jerry&#x27;s &#8220;pick&#8221; &hellip;`;
    const anchor =
      i % 2 === 0
        ? `<a rel="nofollow" class="result__a" href="${ddgLink(h.url, true)}">${title}</a>`
        : `<a href='${ddgLink(h.url, false)}' class='result__a' rel="nofollow">${title}</a>`;
    return `
<div class="result results_links results_links_deep web-result ">
  <div class="links_main links_deep result__body">
    <h2 class="result__title">
      ${anchor}
    </h2>
    <div class="result__extras">
      <div class="result__extras__url">
        <a class="result__url" href="${ddgLink(h.url, true)}">${escapeHtml(new URL(h.url).host)}</a>
      </div>
    </div>
    <a class="result__snippet" href="${ddgLink(h.url, true)}">${snippet}</a>
    <div class="clear"></div>
  </div>
</div>`;
  });
  return `<!DOCTYPE html>
<html lang="en-US">
<head><meta charset="utf-8"><title>${q} at DuckDuckGo</title>
<link rel="stylesheet" href="/dist/h.css" type="text/css"></head>
<body>
<div id="links_wrapper"><div class="serp__results"><div id="links" class="results">
${ad}
${organic.join("\n")}
<div class="nav-link"><form action="/html/" method="post"><input type="submit" class="btn btn--alt" value="Next" />
<input type="hidden" name="q" value="${q}" /><input type="hidden" name="s" value="10" /></form></div>
</div></div></div>
</body></html>`;
}

function ddgNoResultsPage(query: string): string {
  return `<!DOCTYPE html><html><head><title>${escapeHtml(query)} at DuckDuckGo</title></head><body>
<div id="links" class="results"><div class="no-results">No results.</div></div></body></html>`;
}

function ddgChallengePage(): string {
  return `<!DOCTYPE html><html><head><title>DuckDuckGo</title></head><body>
<form id="challenge-form" action="/anomaly.js" method="POST"><div class="anomaly-modal__title">
Unfortunately, bots use DuckDuckGo too.</div><div class="anomaly-modal__description">Please complete the following challenge to confirm this search was made by a human.</div></form>
</body></html>`;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

const PREFIXES: Array<[string, FakeEngineName]> = [
  ["/searxng/", "searxng"],
  ["/brave/", "brave"],
  ["/tavily/", "tavily"],
  ["/perplexity/", "perplexity"],
  ["/kimi/", "kimi"],
  ["/grok/", "grok"],
  ["/duckduckgo/", "duckduckgo"],
];

/** Starts the fake engines on 127.0.0.1 at a free port. */
export async function startFakeSearchEngines(
  options: FakeSearchEnginesOptions = {},
): Promise<FakeSearchEngines> {
  const braveKey = options.braveKey ?? "brave-test-key-7f3e9a";
  const tavilyKey = options.tavilyKey ?? "tvly-test-key-c41d02";
  const perplexityKey = options.perplexityKey ?? "pplx-test-key-5b71ae";
  const kimiKey = options.kimiKey ?? "sk-moonshot-test-key-9d2c";
  const xaiKey = options.xaiKey ?? "xai-test-key-0e4f81";
  const resultCount = options.resultCount ?? 12;
  const requests: FakeSearchRequest[] = [];
  const modes = new Map<FakeEngineName, FakeEngineMode>();
  const timers = new Set<NodeJS.Timeout>();

  const answer = (
    engine: FakeEngineName,
    record: FakeSearchRequest,
    res: ServerResponse,
    mode: FakeEngineMode,
  ) => {
    const { params, headers, method } = record;
    if (mode.kind === "status") {
      if (mode.body !== undefined) {
        res.writeHead(mode.status, { "content-type": "text/plain" });
        res.end(mode.body);
      } else sendJson(res, mode.status, braveError(mode.status, "FAKE_FAILURE", `Fake ${engine} failure.`));
      return;
    }
    if (mode.kind === "rate_limit") {
      const extra: Record<string, string> =
        mode.retryAfter === undefined ? {} : { "retry-after": mode.retryAfter };
      sendJson(res, 429, braveError(429, "RATE_LIMITED", "Request rate limit exceeded for plan."), extra);
      return;
    }
    if (mode.kind === "blocked") {
      if (engine === "duckduckgo") sendHtml(res, 202, ddgChallengePage());
      else sendJson(res, 403, braveError(403, "FORBIDDEN", "Blocked."));
      return;
    }
    const empty = mode.kind === "empty";
    switch (engine) {
      case "searxng": {
        if (method !== "GET" && method !== "POST") return sendJson(res, 405, { error: "method" });
        // SearXNG refuses formats not enabled in settings.yml with 403; the fake enables json only.
        if (params.format !== "json") return sendHtml(res, 403, "<h1>403 Forbidden</h1>");
        const q = params.q ?? "";
        if (!q) return sendJson(res, 400, { error: "empty query" });
        return sendJson(res, 200, searxngAnswer(q, empty ? [] : fakeHits("searxng", q, resultCount)));
      }
      case "brave": {
        if (headers["x-subscription-token"] !== braveKey) {
          return sendJson(
            res,
            401,
            braveError(401, "SUBSCRIPTION_TOKEN_INVALID", "The provided subscription token is invalid."),
          );
        }
        const q = params.q ?? "";
        const count = params.count === undefined ? 20 : Number(params.count);
        if (!q || !Number.isInteger(count) || count < 1 || count > 20) {
          return sendJson(
            res,
            422,
            braveError(422, "VALIDATION", "Unable to validate request parameter(s)."),
          );
        }
        const hits = empty ? [] : fakeHits("brave", q, Math.min(count, resultCount));
        return sendJson(res, 200, braveAnswer(q, hits));
      }
      case "tavily": {
        if (method !== "POST") return sendJson(res, 405, { detail: { error: "Method Not Allowed" } });
        if (headers.authorization !== `Bearer ${tavilyKey}`) {
          return sendJson(res, 401, { detail: { error: "Unauthorized: missing or invalid API key." } });
        }
        let body: { query?: unknown; max_results?: unknown };
        try {
          body = JSON.parse(record.body) as typeof body;
        } catch {
          return sendJson(res, 400, { detail: { error: "Invalid JSON body." } });
        }
        const max = body.max_results === undefined ? 5 : Number(body.max_results);
        if (
          typeof body.query !== "string" ||
          body.query === "" ||
          !Number.isInteger(max) ||
          max < 0 ||
          max > 20
        ) {
          return sendJson(res, 400, { detail: { error: "Invalid request parameters." } });
        }
        const hits = empty ? [] : fakeHits("tavily", body.query, Math.min(max, resultCount));
        return sendJson(res, 200, tavilyAnswer(body.query, hits));
      }
      case "perplexity": {
        if (method !== "POST") return sendJson(res, 405, { error: { message: "Method Not Allowed" } });
        if (headers.authorization !== `Bearer ${perplexityKey}`) {
          return sendJson(res, 401, { error: { message: "Invalid API key", type: "invalid_api_key" } });
        }
        let body: { query?: unknown; max_results?: unknown };
        try {
          body = JSON.parse(record.body) as typeof body;
        } catch {
          return sendJson(res, 400, { error: { message: "Invalid JSON body." } });
        }
        const max = body.max_results === undefined ? 10 : Number(body.max_results);
        if (
          typeof body.query !== "string" ||
          body.query === "" ||
          !Number.isInteger(max) ||
          max < 1 ||
          max > 20
        ) {
          return sendJson(res, 400, { error: { message: "Invalid request parameters." } });
        }
        return sendJson(
          res,
          200,
          perplexityAnswer(empty ? [] : fakeHits("perplexity", body.query, Math.min(max, resultCount))),
        );
      }
      case "kimi": {
        if (headers.authorization !== `Bearer ${kimiKey}`) {
          return sendJson(res, 401, {
            error: { message: "Invalid Authentication", type: "invalid_authentication_error" },
          });
        }
        const body = JSON.parse(record.body || "{}") as ChatBody;
        const messages = body.messages ?? [];
        const offered = (body.tools ?? []).some(
          (t) => t.type === "builtin_function" && t.function?.name === "$web_search",
        );
        const query = String(messages.filter((m) => m.role === "user").at(-1)?.content ?? "");
        const searched = messages.find((m) => m.role === "tool" && m.name === "$web_search");
        if (!offered || !query)
          return sendJson(res, 400, { error: { message: "no $web_search tool or query" } });
        if (!searched) {
          // First round: the model asks for the builtin search; the client must echo the arguments.
          const args = JSON.stringify({
            search_result: { search_id: "fake-search-1" },
            usage: { total_tokens: 42 },
          });
          return sendJson(
            res,
            200,
            chatCompletion(
              String(body.model),
              {
                content: "",
                tool_calls: [
                  {
                    index: 0,
                    id: "$web_search-1",
                    type: "builtin_function",
                    function: { name: "$web_search", arguments: args },
                  },
                ],
              },
              "tool_calls",
            ),
          );
        }
        if (!String(searched.content).includes("fake-search-1")) {
          return sendJson(res, 400, { error: { message: "the $web_search arguments were not echoed" } });
        }
        const hits = empty ? [] : fakeHits("kimi", query, Math.min(10, resultCount));
        return sendJson(res, 200, chatCompletion(String(body.model), { content: resultLines(hits) }, "stop"));
      }
      case "grok": {
        if (headers.authorization !== `Bearer ${xaiKey}`) {
          return sendJson(res, 400, {
            code: "Client specified an invalid argument",
            error: "Incorrect API key provided",
          });
        }
        const body = JSON.parse(record.body || "{}") as ChatBody;
        const query = String((body.messages ?? []).filter((m) => m.role === "user").at(-1)?.content ?? "");
        if (body.search_parameters?.mode !== "on" || !query) {
          return sendJson(res, 400, { error: "live search not asked for" });
        }
        const max = Math.min(body.search_parameters.max_search_results ?? 20, resultCount);
        const hits = empty ? [] : fakeHits("grok", query, max);
        return sendJson(
          res,
          200,
          chatCompletion(String(body.model), { content: resultLines(hits) }, "stop", {
            citations: hits.map((h) => h.url),
          }),
        );
      }
      case "duckduckgo": {
        const q = params.q ?? "";
        if (!q) return sendHtml(res, 200, "<html><body><form action='/html/'></form></body></html>");
        // The HTML endpoint shows about ten organic results per page.
        const hits = empty ? [] : fakeHits("duckduckgo", q, Math.min(10, resultCount));
        return sendHtml(res, 200, empty ? ddgNoResultsPage(q) : ddgResultsPage(q, hits));
      }
    }
  };

  const server = http.createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      const route = PREFIXES.find(([prefix]) => url.pathname.startsWith(prefix));
      const body = await readBody(req);
      if (!route) return sendJson(res, 404, { error: "no such engine" });
      const [prefix, engine] = route;
      const path = url.pathname.slice(prefix.length - 1);
      const expected = {
        searxng: "/search",
        brave: "/res/v1/web/search",
        tavily: "/search",
        perplexity: "/search",
        kimi: "/chat/completions",
        grok: "/chat/completions",
        duckduckgo: "/html/",
      };
      if (path !== expected[engine] && !(engine === "duckduckgo" && path === "/html")) {
        return sendJson(res, 404, { error: `unknown ${engine} path ${path}` });
      }
      const params: Record<string, string> = Object.fromEntries(url.searchParams);
      const type = String(req.headers["content-type"] ?? "");
      if (type.startsWith("application/x-www-form-urlencoded")) {
        for (const [k, v] of new URLSearchParams(body)) params[k] = v;
      }
      const record: FakeSearchRequest = {
        engine,
        method: req.method ?? "GET",
        path: url.pathname + url.search,
        params,
        headers: req.headers,
        body,
      };
      requests.push(record);
      const mode = modes.get(engine);
      if (mode?.kind === "slow") {
        const timer = setTimeout(() => {
          timers.delete(timer);
          if (!res.destroyed) answer(engine, record, res, { kind: "ok" });
        }, mode.delayMs);
        timers.add(timer);
        res.on("close", () => {
          clearTimeout(timer);
          timers.delete(timer);
        });
        return;
      }
      answer(engine, record, res, mode ?? { kind: "ok" });
    })().catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: String(err) });
      else res.destroy();
    });
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;

  return {
    origin,
    baseUrls: {
      searxng: `${origin}/searxng`,
      brave: `${origin}/brave`,
      tavily: `${origin}/tavily`,
      perplexity: `${origin}/perplexity`,
      kimi: `${origin}/kimi`,
      grok: `${origin}/grok`,
      duckduckgo: `${origin}/duckduckgo`,
    },
    braveKey,
    tavilyKey,
    perplexityKey,
    kimiKey,
    xaiKey,
    requests,
    count: (engine) => requests.filter((r) => r.engine === engine).length,
    setMode: (engine, mode) => {
      modes.set(engine, mode);
    },
    reset: () => {
      modes.clear();
      requests.length = 0;
    },
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    },
  };
}
