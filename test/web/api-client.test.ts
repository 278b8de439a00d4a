import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient, ApiError, errorText } from "../../web/src/api.js";

interface Seen {
  method: string;
  url: string;
  csrf: string | undefined;
  contentType: string | undefined;
  body: string;
}

const seen: Seen[] = [];
let server: Server;
let baseUrl: string;

interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Sent as-is with a text/html type, for non-JSON error pages. */
  html?: string;
}

/** The canned answer of the fake server for one request. */
function route(method: string, url: string, body: string): Reply {
  const user = { id: "u1", username: "ana", role: "owner" };
  const key = `${method} ${url}`;
  switch (key) {
    case "POST /api/auth/login":
      return { status: 200, body: { user, csrfToken: "csrf-1", token: "t" } };
    case "GET /api/auth/me":
      return { status: 200, body: { user, csrfToken: "csrf-2" } };
    case "POST /api/auth/logout":
      return { status: 204 };
    case "GET /api/channels/c%2F1/messages?before=10&limit=50":
      return { status: 200, body: [{ id: 9 }] };
    case "POST /api/channels/c1/messages":
      return { status: 201, body: { message: { id: 1, text: JSON.parse(body).text }, runs: [] } };
    case "POST /api/agents":
      return {
        status: 400,
        body: {
          error: {
            code: "invalid",
            message: "Invalid agent",
            issues: [{ path: "id", message: "must be a slug" }],
          },
        },
      };
    case "GET /api/channels":
      return { status: 401, body: { error: { code: "unauthenticated", message: "Log in first" } } };
    case "POST /api/channels/c1/read":
      return {
        status: 429,
        body: { error: { code: "rate_limited", message: "Slow down" } },
        headers: { "retry-after": "7" },
      };
    case "GET /api/mcp":
      return { status: 200, body: { servers: [{ name: "fs", status: "connected" }] } };
    case "GET /api/tokens":
      return { status: 502, html: "<html>bad gateway</html>" };
    default:
      return { status: 404, body: { error: { code: "not_found", message: `No route ${key}` } } };
  }
}

function send(res: ServerResponse, reply: Reply): void {
  const type = reply.html === undefined ? "application/json" : "text/html";
  res.writeHead(reply.status, { "content-type": type, ...reply.headers });
  res.end(reply.html ?? (reply.body === undefined ? undefined : JSON.stringify(reply.body)));
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => {
      body += chunk.toString("utf8");
    });
    req.on("end", () => {
      const header = req.headers["x-csrf-token"];
      seen.push({
        method: req.method ?? "",
        url: req.url ?? "",
        csrf: typeof header === "string" ? header : undefined,
        contentType: req.headers["content-type"],
        body,
      });
      send(res, route(req.method ?? "", req.url ?? "", body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function last(): Seen {
  const entry = seen[seen.length - 1];
  if (!entry) throw new Error("no request seen");
  return entry;
}

describe("ApiClient", () => {
  it("keeps the CSRF token from login in memory and sends it on state changes only", async () => {
    const api = new ApiClient({ baseUrl });
    expect(api.csrfToken).toBeUndefined();
    const result = await api.login("ana", "pw");
    expect(result.user.username).toBe("ana");
    expect(last()).toMatchObject({ method: "POST", csrf: undefined, contentType: "application/json" });
    expect(JSON.parse(last().body)).toEqual({ username: "ana", password: "pw" });
    expect(api.csrfToken).toBe("csrf-1");

    const posted = await api.postMessage("c1", "hello @coder");
    expect(posted.message.text).toBe("hello @coder");
    expect(last()).toMatchObject({ method: "POST", url: "/api/channels/c1/messages", csrf: "csrf-1" });

    await api.listMessages("c/1", { before: 10, limit: 50 });
    expect(last()).toMatchObject({
      method: "GET",
      url: "/api/channels/c%2F1/messages?before=10&limit=50",
      csrf: undefined,
    });

    await api.me();
    expect(api.csrfToken).toBe("csrf-2");
    await api.logout();
    expect(last()).toMatchObject({ method: "POST", url: "/api/auth/logout", csrf: "csrf-2", body: "" });
    expect(api.csrfToken).toBeUndefined();
  });

  it("turns error bodies into ApiError with code, status and issues", async () => {
    const api = new ApiClient({ baseUrl });
    const err = await api.createAgent({ id: "Bad Id", name: "x" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({
      status: 400,
      code: "invalid",
      message: "Invalid agent",
      issues: [{ path: "id", message: "must be a slug" }],
    });
    // The field and what is wrong with it, as a sentence (not "invalid request body (id: …)").
    expect(errorText(err)).toBe("The id: must be a slug.");

    const limited = await api.markRead("c1", 3).catch((e: unknown) => e);
    expect(limited).toMatchObject({ status: 429, code: "rate_limited", retryAfterSeconds: 7 });
  });

  it("reports a non-JSON error page by status and path", async () => {
    const api = new ApiClient({ baseUrl });
    const err = await api.listTokens().catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 502, code: "http_502" });
    expect((err as ApiError).message).toContain("/api/tokens");
  });

  it("calls onUnauthenticated for a 401 outside /api/auth, not for auth routes", async () => {
    let lost = 0;
    const api = new ApiClient({ baseUrl, onUnauthenticated: () => (lost += 1) });
    await expect(api.listChannels()).rejects.toMatchObject({ status: 401, code: "unauthenticated" });
    expect(lost).toBe(1);
    await expect(api.authStatus()).rejects.toMatchObject({ status: 404 });
    expect(lost).toBe(1);
  });

  it("accepts the MCP list wrapped in {servers}", async () => {
    const api = new ApiClient({ baseUrl });
    expect(await api.listMcp()).toEqual([{ name: "fs", status: "connected" }]);
  });

  it("names the cause when the server cannot be reached", async () => {
    const api = new ApiClient({ baseUrl: "http://127.0.0.1:1" });
    const err = await api.authStatus().catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 0, code: "network" });
    expect((err as ApiError).message).toMatch(/Cannot reach the Dimsum server .*check that it is running/);
  });
});
