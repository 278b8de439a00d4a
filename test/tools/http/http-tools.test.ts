import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isAddressAllowed } from "../../../src/tools/builtin/network-guard.js";
import { checkHttpToolDefinition } from "../../../src/tools/http/definition.js";
import { createHttpTool, type HttpToolOptions } from "../../../src/tools/http/http-tool.js";
import { loadHttpTools } from "../../../src/tools/http/load-http-tools.js";
import type { JsonSchemaTool } from "../../../src/tools/types.js";
import { callTool, makeContext, sendJson, startServer, type TestServer, textOf } from "./helpers.js";

const TOKEN = "tok-Zq9!secret/value";
let server: TestServer;

beforeAll(async () => {
  server = await startServer((req, res) => {
    const url = new URL(req.url, "http://x");
    if (url.pathname.startsWith("/echo")) {
      sendJson(res, 200, {
        method: req.method,
        path: req.url,
        query: Object.fromEntries(url.searchParams),
        body: req.body,
        contentType: req.headers["content-type"] ?? null,
        authorization: req.headers.authorization ?? null,
      });
    } else if (url.pathname === "/auth-fail") {
      res
        .writeHead(401, { "content-type": "text/plain" })
        .end(`invalid credentials: ${req.headers.authorization}`);
    } else if (url.pathname === "/data") {
      sendJson(res, 200, {
        current: { temperature_2m: 21.5, wind: 3 },
        daily: { time: ["2025-06-01", "2025-06-02", "2025-06-03"] },
        results: [{ name: "first" }, { name: "second" }],
      });
    } else if (url.pathname === "/missing") {
      res.writeHead(404, { "content-type": "text/plain" }).end("no such thing here");
    } else if (url.pathname === "/slow") {
      // Never answers: the tool's own timeout must end the call.
    } else if (url.pathname === "/text") {
      res.writeHead(200, { "content-type": "text/plain" }).end("x".repeat(500));
    } else {
      res.writeHead(500).end("unexpected route");
    }
  });
});

afterAll(async () => {
  await server.close();
});

function tool(definition: Record<string, unknown>, options: Partial<HttpToolOptions> = {}): JsonSchemaTool {
  const checked = checkHttpToolDefinition({ allowPrivateNetwork: true, ...definition });
  if (!checked.ok) throw new Error(checked.message);
  return createHttpTool(checked.tool, { env: {}, ...options });
}

const stringParam = (name: string) => ({
  type: "object",
  properties: { [name]: { type: "string" } },
  required: [name],
});

describe("HTTP tools against a local server", () => {
  it("GET: URL-encodes path and query parameters", async () => {
    const search = tool({
      name: "search",
      description: "Search things.",
      parameters: {
        type: "object",
        properties: { q: { type: "string" }, id: { type: "string" }, limit: { type: "integer", default: 5 } },
        required: ["q", "id"],
      },
      url: `${server.base}/echo/{{id}}`,
      query: { q: "{{q}}", limit: "{{limit}}", lang: "en" },
    });
    const q = "café & crème=1/2 ? #tag 中文";
    const result = await callTool(search, { q, id: "a b/c" });
    expect(result.isError).toBeFalsy();
    const echoed = JSON.parse(textOf(result)) as { path: string; query: Record<string, string> };
    expect(echoed.path.startsWith("/echo/a%20b%2Fc?")).toBe(true);
    expect(echoed.query).toEqual({ q, limit: "5", lang: "en" });
  });

  it("POST: escapes quotes, newlines and unicode in JSON bodies, object and text templates alike", async () => {
    const text = 'She said "hi"\nthen left\t\\ ✓ 中文 \u2028 end';
    const parameters = {
      type: "object",
      properties: {
        text: { type: "string" },
        count: { type: "integer" },
        tags: { type: "array", items: { type: "string" } },
      },
      required: ["text", "count", "tags"],
    };
    const objectBody = tool({
      name: "post_object",
      description: "Post.",
      parameters,
      method: "post",
      url: `${server.base}/echo`,
      body: { text: "{{text}}", note: "quote: {{text}}", count: "{{count}}", tags: "{{tags}}", fixed: true },
    });
    const result = await callTool(objectBody, { text, count: 7, tags: ["a", 'b"c'] });
    const echoed = JSON.parse(textOf(result)) as { body: string; method: string; contentType: string };
    expect(echoed.method).toBe("POST");
    expect(echoed.contentType).toBe("application/json");
    expect(JSON.parse(echoed.body)).toEqual({
      text,
      note: `quote: ${text}`,
      count: 7,
      tags: ["a", 'b"c'],
      fixed: true,
    });

    const textBody = tool({
      name: "post_text",
      description: "Post.",
      parameters,
      method: "POST",
      url: `${server.base}/echo`,
      body: '{"message": "{{text}}", "n": {{count}}, "tags": {{tags}}}',
    });
    const second = JSON.parse(textOf(await callTool(textBody, { text, count: 2, tags: ["x"] }))) as {
      body: string;
    };
    expect(JSON.parse(second.body)).toEqual({ message: text, n: 2, tags: ["x"] });
  });

  it("sends form bodies when asked", async () => {
    const form = tool({
      name: "form",
      description: "Form.",
      parameters: stringParam("text"),
      method: "POST",
      url: `${server.base}/echo`,
      body: { text: "{{text}}" },
      bodyType: "form",
    });
    const echoed = JSON.parse(textOf(await callTool(form, { text: "a b&c" }))) as {
      body: string;
      contentType: string;
    };
    expect(echoed.contentType).toBe("application/x-www-form-urlencoded");
    expect(new URLSearchParams(echoed.body).get("text")).toBe("a b&c");
  });

  it("uses env secrets in headers but never shows them, even when the server echoes them", async () => {
    const env = { SERVICE_TOKEN: TOKEN };
    const ok = tool(
      {
        name: "secret_ok",
        description: "Calls the API.",
        url: `${server.base}/echo`,
        headers: { authorization: "Bearer {{env.SERVICE_TOKEN}}" },
        query: { key: "{{env.SERVICE_TOKEN}}" },
      },
      { env },
    );
    const okResult = await callTool(ok, {});
    expect(server.requests.at(-1)?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(textOf(okResult)).not.toContain(TOKEN);
    expect(textOf(okResult)).not.toContain(encodeURIComponent(TOKEN));
    expect(textOf(okResult)).toContain("Bearer [redacted]");
    expect(ok.description).toBe("Calls the API.");

    const failing = tool(
      {
        name: "secret_fail",
        description: "Calls the API.",
        url: `${server.base}/auth-fail`,
        headers: { authorization: "Bearer {{env.SERVICE_TOKEN}}" },
      },
      { env },
    );
    const failResult = await callTool(failing, {});
    expect(failResult.isError).toBe(true);
    expect(textOf(failResult)).toContain("HTTP 401");
    expect(textOf(failResult)).toContain("invalid credentials: Bearer [redacted]");
    expect(textOf(failResult)).not.toContain(TOKEN);
    expect(JSON.stringify(failResult)).not.toContain(TOKEN);
  });

  it("names an unset env variable without failing the process", async () => {
    const needsKey = tool({
      name: "needs_key",
      description: "d",
      url: `${server.base}/echo`,
      headers: { "x-api-key": "{{env.MISSING_API_KEY}}" },
    });
    const result = await callTool(needsKey, {});
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("MISSING_API_KEY is not set");
  });

  it("extracts comma-separated paths with array indexes and wildcards", async () => {
    const data = tool({
      name: "data",
      description: "d",
      url: `${server.base}/data`,
      responseExtract: "current.temperature_2m, daily.time[0], daily.time[-1], results[*].name, not.there",
    });
    const result = await callTool(data, {});
    expect(JSON.parse(textOf(result))).toEqual({
      "current.temperature_2m": 21.5,
      "daily.time[0]": "2025-06-01",
      "daily.time[-1]": "2025-06-03",
      "results[*].name": ["first", "second"],
      "not.there": null,
    });
    expect(result.data).toEqual({ status: 200 });
  });

  it("caps long responses", async () => {
    const text = tool({ name: "text", description: "d", url: `${server.base}/text`, maxResponseChars: 100 });
    const content = textOf(await callTool(text, {}));
    expect(content.startsWith("x".repeat(100))).toBe(true);
    expect(content).toContain("[truncated: 400 more characters]");
  });

  it("turns a non-2xx answer into an error result with status and body excerpt", async () => {
    const missing = tool({ name: "missing", description: "d", url: `${server.base}/missing` });
    const result = await callTool(missing, {});
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("HTTP 404 Not Found");
    expect(textOf(result)).toContain("no such thing here");
  });

  it("times out with an error result", async () => {
    const slow = tool({ name: "slow", description: "d", url: `${server.base}/slow`, timeoutMs: 200 });
    const result = await callTool(slow, {});
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/did not answer within 200 ms/);
  });

  it("refuses private addresses unless the definition or the config allows them", async () => {
    const definition = {
      name: "private",
      description: "d",
      url: `${server.base}/echo`,
      allowPrivateNetwork: false,
    };
    const before = server.requests.length;
    const refused = await callTool(tool(definition), {});
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/Refused.*127\.0\.0\.1 is a loopback address/);
    expect(textOf(refused)).toContain("allowPrivateNetwork");
    expect(server.requests.length).toBe(before);

    const byConfig = await callTool(tool(definition), {}, makeContext(true));
    expect(byConfig.isError).toBeFalsy();
    const byOption = await callTool(tool(definition, { allowPrivateNetwork: true }), {});
    expect(byOption.isError).toBeFalsy();
  });

  it("refuses a host name that resolves to a private address", async () => {
    const guard = {
      lookup: async () => [{ address: "10.1.2.3", family: 4 as const }],
      isAddressAllowed,
    };
    const internal = tool(
      { name: "internal", description: "d", url: "http://intranet.example/api", allowPrivateNetwork: false },
      { guard },
    );
    const result = await callTool(internal, {});
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/10\.1\.2\.3 is a private address/);
  });

  it("checks arguments against the JSON Schema before calling", async () => {
    const search = tool({
      name: "strict",
      description: "d",
      parameters: stringParam("q"),
      url: `${server.base}/echo`,
    });
    const result = await callTool(search, { q: 5 });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/`q`: expected string/);
  });

  it("chains steps: extracted values become parameters of the next request", async () => {
    const chained = tool({
      name: "chained",
      description: "d",
      parameters: stringParam("word"),
      steps: [
        {
          name: "lookup",
          url: `${server.base}/data`,
          extract: { firstDay: "daily.time[0]", name: "results[1].name", absent: "nope.value?" },
          includeInResult: true,
        },
      ],
      url: `${server.base}/echo`,
      query: { day: "{{firstDay}}", who: "{{name}}", word: "{{word}}" },
      responseExtract: "query",
    });
    const result = await callTool(chained, { word: "hello" });
    expect(JSON.parse(textOf(result))).toEqual({
      firstDay: "2025-06-01",
      name: "second",
      absent: null,
      query: { day: "2025-06-01", who: "second", word: "hello" },
    });
  });
});

describe("loadHttpTools", () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "dimsum-http-tools-"));
    await writeFile(
      join(dir, "good.json"),
      JSON.stringify({ name: "good", description: "Good tool.", url: "https://api.example.com/x" }),
    );
    await writeFile(
      join(dir, "many.json"),
      JSON.stringify([
        { name: "one", description: "One.", url: "https://api.example.com/1" },
        { name: "two", description: "Two." },
      ]),
    );
    await writeFile(join(dir, "syntax.json"), '{\n  "name": "broken",\n  "url": }\n');
    await writeFile(
      join(dir, "unknown-param.json"),
      JSON.stringify({ name: "unknown", description: "d", url: "https://api.example.com/{{nope}}" }),
    );
    await writeFile(
      join(dir, "bad-url.json"),
      JSON.stringify({ name: "badurl", description: "d", url: "ftp://example.com" }),
    );
    await writeFile(join(dir, "trailing-comma.json"), '{\n  "name": "x",\n  "url": "https://a.test",\n}\n');
    await writeFile(join(dir, "notes.txt"), "not a definition");
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("loads good definitions and reports each bad one with its path", async () => {
    const { tools, errors } = await loadHttpTools([dir, join(dir, "does-not-exist")], {});
    expect(tools.map((t) => t.name).sort()).toEqual(["good", "one"]);
    expect(tools.every((t) => t.kind === "json")).toBe(true);
    const byPath = Object.fromEntries(errors.map((e) => [e.path, e.message]));
    expect(Object.keys(byPath).sort()).toEqual(
      [
        join(dir, "bad-url.json"),
        join(dir, "many.json[1]"),
        join(dir, "syntax.json"),
        join(dir, "trailing-comma.json"),
        join(dir, "unknown-param.json"),
      ].sort(),
    );
    expect(byPath[join(dir, "syntax.json")]).toMatch(/not valid JSON/);
    // Where the parser gives a position, the line and column are added (Node 20 omits them itself).
    expect(byPath[join(dir, "trailing-comma.json")]).toMatch(/line 4 column 1/);
    expect(byPath[join(dir, "many.json[1]")]).toMatch(/url/);
    expect(byPath[join(dir, "unknown-param.json")]).toMatch(/\{\{nope\}\} is not a declared parameter/);
    expect(byPath[join(dir, "bad-url.json")]).toMatch(/http:\/\/ or https:\/\//);
  });

  it("lets later sources win and accepts definitions passed in", async () => {
    const { tools, errors } = await loadHttpTools(
      [dir],
      {},
      {
        definitions: [
          { name: "good", description: "Replaced.", url: "https://api.example.com/y" },
          { name: 1 },
        ],
      },
    );
    expect(tools.find((t) => t.name === "good")?.description).toBe("Replaced.");
    expect(errors.some((e) => e.path === "httpTools[1]")).toBe(true);
  });
});
