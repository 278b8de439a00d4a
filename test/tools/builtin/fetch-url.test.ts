import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createFetchUrlTool, fetchUrlTool } from "../../../src/tools/builtin/fetch-url.js";
import {
  type GuardDeps,
  isAddressAllowed,
  type ResolvedAddress,
} from "../../../src/tools/builtin/network-guard.js";
import type { ToolContext, ZodTool } from "../../../src/tools/types.js";
import { makeContext, runTool, textOf } from "./context.js";

const PAGE = `<!doctype html><html><head><title>Dim &amp; Sum</title><style>.x{color:red}</style>
<script>var leaked = "SCRIPT-SECRET";</script></head>
<body><header>SITE-HEADER</header><nav><a href="/home">NAV-LINK</a></nav>
<main><h1>Welcome</h1><p>Read the <a href="/docs/start">guide</a> or <a href="https://example.org/">https://example.org/</a>.</p>
<ul><li>first</li><li>second</li></ul></main>
<footer>SITE-FOOTER</footer><script>alert("SCRIPT-2")</script></body></html>`;

const requests: string[] = [];
let server: Server;
let base: string;

function route(req: IncomingMessage, res: ServerResponse) {
  const url = req.url ?? "/";
  if (url === "/html") {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE);
  } else if (url === "/json") {
    res.writeHead(200, { "content-type": "application/json" }).end('{"name":"dimsum","tags":["a","b"]}');
  } else if (url === "/text") {
    res.writeHead(200, { "content-type": "text/plain" }).end("plain words\n");
  } else if (url === "/big") {
    res.writeHead(200, { "content-type": "text/plain" }).end("x".repeat(100_000));
  } else if (url === "/gzip") {
    res
      .writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" })
      .end(gzipSync("unzipped ok"));
  } else if (url === "/png") {
    res
      .writeHead(200, { "content-type": "image/png" })
      .end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 1]));
  } else if (url === "/missing") {
    res.writeHead(404, { "content-type": "text/plain" }).end("no such page here");
  } else if (url === "/redirect") {
    res.writeHead(302, { location: "/json" }).end();
  } else if (url === "/loop") {
    res.writeHead(302, { location: "/loop" }).end();
  } else if (url === "/to-internal") {
    res.writeHead(302, { location: "http://internal.test/secret" }).end();
  } else if (url === "/post-redirect") {
    res.writeHead(303, { location: "/echo" }).end();
  } else if (url === "/echo") {
    let body = "";
    req.on("data", (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ method: req.method, body, contentType: req.headers["content-type"] ?? null }));
    });
  } else if (url === "/slow") {
    // Never answers: the client must time out or be aborted.
  } else {
    res.writeHead(500).end();
  }
}

beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push(req.url ?? "");
    route(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  requests.length = 0;
});

function privateCtx(): ToolContext {
  const ctx = makeContext("/tmp");
  ctx.config.fetch.allowPrivateNetwork = true;
  return ctx;
}

const fetchWith = (args: Record<string, unknown>, ctx = privateCtx(), tool: ZodTool = fetchUrlTool) =>
  runTool(tool, args, ctx);

describe("fetch_url content (private network allowed)", () => {
  it("turns HTML into readable text: title, content and links, without scripts, styles, nav, header, footer", async () => {
    const result = await fetchWith({ url: `${base}/html` });
    const text = textOf(result);
    expect(result.isError).toBeUndefined();
    expect(text).toContain("Title: Dim & Sum");
    expect(text).toContain("Welcome");
    expect(text).toContain(`guide [${base}/docs/start]`);
    expect(text).toContain("https://example.org/");
    expect(text).not.toContain("[https://example.org/]");
    expect(text).toContain("first");
    for (const hidden of [
      "SCRIPT-SECRET",
      "SCRIPT-2",
      "color:red",
      "NAV-LINK",
      "SITE-HEADER",
      "SITE-FOOTER",
    ]) {
      expect(text).not.toContain(hidden);
    }
  });

  it("pretty-prints JSON", async () => {
    const text = textOf(await fetchWith({ url: `${base}/json` }));
    expect(text).toContain('{\n  "name": "dimsum",\n  "tags": [\n    "a",\n    "b"\n  ]\n}');
    expect(text).toContain("Status: 200 OK");
  });

  it("returns text as is and decompresses gzip", async () => {
    expect(textOf(await fetchWith({ url: `${base}/text` }))).toMatch(/\n\nplain words\n$/);
    expect(textOf(await fetchWith({ url: `${base}/gzip` }))).toContain("unzipped ok");
  });

  it("describes binary content instead of returning bytes", async () => {
    const text = textOf(await fetchWith({ url: `${base}/png` }));
    expect(text).toContain("[binary content: image/png, 8 B; not shown as text]");
  });

  it("caps the text at maxChars and says so", async () => {
    const text = textOf(await fetchWith({ url: `${base}/big`, maxChars: 500 }));
    expect(text).toContain(`${"x".repeat(500)}\n[truncated: showing the first 500 of 100000 characters`);
    expect(text).not.toContain("x".repeat(501));
  });

  it("stops downloading at maxBytes and says so", async () => {
    const ctx = privateCtx();
    ctx.config.fetch.maxBytes = 1000;
    const text = textOf(await fetchWith({ url: `${base}/big` }, ctx));
    expect(text).toContain(`${"x".repeat(1000)}\n[download stopped at 1000 B`);
    expect(text).not.toContain("x".repeat(1001));
  });

  it("reports non-2xx responses as errors with status and an excerpt", async () => {
    const result = await fetchWith({ url: `${base}/missing` });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain(`HTTP 404 Not Found from ${base}/missing`);
    expect(textOf(result)).toContain("no such page here");
  });

  it("follows redirects and reports the final URL", async () => {
    const text = textOf(await fetchWith({ url: `${base}/redirect` }));
    expect(text).toContain(`URL: ${base}/json (after 1 redirect)`);
    expect(text).toContain('"name": "dimsum"');
    expect(requests).toEqual(["/redirect", "/json"]);
  });

  it("gives up after five redirects", async () => {
    const result = await fetchWith({ url: `${base}/loop` });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("Too many redirects");
    expect(requests).toHaveLength(6);
  });

  it("sends POST bodies and turns a 303 into a GET", async () => {
    const posted = textOf(await fetchWith({ url: `${base}/echo`, method: "POST", body: '{"q":1}' }));
    expect(posted).toContain('"method": "POST"');
    expect(posted).toContain('"body": "{\\"q\\":1}"');
    expect(posted).toContain('"contentType": "application/json"');
    const redirected = textOf(await fetchWith({ url: `${base}/post-redirect`, method: "POST", body: "x" }));
    expect(redirected).toContain('"method": "GET"');
    expect(redirected).toContain('"body": ""');
  });

  it("times out", async () => {
    const ctx = privateCtx();
    ctx.config.fetch.timeoutMs = 300;
    const result = await fetchWith({ url: `${base}/slow` }, ctx);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("timed out after 0.3 s");
  });

  it("stops when the run is aborted", async () => {
    const controller = new AbortController();
    const ctx = { ...privateCtx(), signal: controller.signal };
    setTimeout(() => controller.abort(), 100);
    const result = await fetchWith({ url: `${base}/slow` }, ctx);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("was aborted");
  });

  it("refuses non-http schemes", async () => {
    const result = await fetchWith({ url: "file:///etc/passwd" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("Only http and https");
  });
});

describe("fetch_url network guard (default policy)", () => {
  const publicCtx = () => makeContext("/tmp");

  it.each([
    () => `${base}/html`,
    () => base.replace("127.0.0.1", "localhost"),
    () => base.replace("127.0.0.1", "[::1]"),
    () => base.replace("127.0.0.1", "[::ffff:127.0.0.1]"),
    () => "http://169.254.169.254/latest/meta-data/",
    () => "http://10.0.0.1/",
    () => "http://192.168.0.1/",
    () => "http://0.0.0.0/",
  ])("refuses private target %# before connecting", async (target) => {
    const result = await fetchWith({ url: target() }, publicCtx());
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("Refused to fetch");
    expect(textOf(result)).toContain("not a public one");
    expect(requests).toEqual([]);
  });

  // Every local server is private, so these tests treat 127.0.0.1 as "public" through an injected
  // rule and resolve made-up names with a fake resolver. Names like public.test cannot resolve for
  // real, so a successful connection also proves the request used the checked address.
  function guardedTool(table: Record<string, string[]>) {
    const calls: string[] = [];
    const deps: GuardDeps = {
      lookup: async (hostname) => {
        calls.push(hostname);
        const next = table[hostname]?.shift();
        if (!next) throw Object.assign(new Error("ENOTFOUND"), { code: "ENOTFOUND" });
        return [{ address: next, family: 4 } satisfies ResolvedAddress];
      },
      isAddressAllowed: (address) =>
        address === "127.0.0.1" ? { allowed: true, range: "unicast" } : isAddressAllowed(address),
    };
    return { tool: createFetchUrlTool(deps), calls };
  }

  it("connects to the checked address, not to a second DNS answer", async () => {
    const port = (server.address() as AddressInfo).port;
    const { tool, calls } = guardedTool({ "rebind.test": ["127.0.0.1", "10.0.0.1"] });
    const result = await fetchWith({ url: `http://rebind.test:${port}/json` }, publicCtx(), tool);
    expect(result.isError).toBeUndefined();
    expect(textOf(result)).toContain('"name": "dimsum"');
    expect(calls).toEqual(["rebind.test"]);
  });

  it("re-checks every redirect hop and refuses one that leads to a private address", async () => {
    const port = (server.address() as AddressInfo).port;
    const { tool, calls } = guardedTool({ "public.test": ["127.0.0.1"], "internal.test": ["10.0.0.5"] });
    const result = await fetchWith({ url: `http://public.test:${port}/to-internal` }, publicCtx(), tool);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("Refused to fetch http://internal.test/secret");
    expect(textOf(result)).toContain("10.0.0.5 is a private address");
    expect(calls).toEqual(["public.test", "internal.test"]);
    expect(requests).toEqual(["/to-internal"]);
  });

  it("refuses a redirect hop to a private address with the real rules too", async () => {
    // With the default guard the first hop (a local server) is already refused: nothing is requested.
    const result = await fetchWith({ url: `${base}/to-internal` }, publicCtx());
    expect(result.isError).toBe(true);
    expect(requests).toEqual([]);
  });
});
