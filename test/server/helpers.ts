/** Shared set-up for the server tests: a real server on 127.0.0.1:0 over a temp SQLite file, and a small client. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { createServer, type DimsumServer, type ServerDeps } from "../../src/server/app.js";
import type { ServerLog } from "../../src/server/context.js";
import { type Database, openDatabase } from "../../src/store/database.js";

const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A fresh temp folder, removed after the test. */
export function tempDir(prefix = "dimsum-server-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface LogLines extends ServerLog {
  lines: string[];
}

/** A log that remembers what it was told. */
export function memoryLog(): LogLines {
  const lines: string[] = [];
  return {
    lines,
    info: (m) => lines.push(`info: ${m}`),
    warn: (m) => lines.push(`warn: ${m}`),
    error: (m, err) =>
      lines.push(`error: ${m} ${err instanceof Error ? (err.stack ?? err.message) : String(err ?? "")}`),
  };
}

export interface TestServer {
  url: string;
  host: string;
  server: DimsumServer;
  db: Database;
  home: string;
  log: LogLines;
}

const generousLimit = { capacity: 10_000, perMinute: 10_000 };

/** Starts a real server; limits are generous unless the test sets them. Closed after the test. */
export async function startServer(
  overrides: Partial<ServerDeps> & { env?: Record<string, string> } = {},
): Promise<TestServer> {
  const home = tempDir();
  const db = openDatabase(join(home, "dimsum.db"));
  const log = memoryLog();
  const config = loadConfig({ cwd: home, env: { DIMSUM_HOME: home, ...overrides.env } });
  // Groups answer each message with a run of its own here (the default `collect` waits 1.5 s for a
  // burst); test/team/approvals-steering.test.ts covers the queue modes.
  config.queue = { ...config.queue, group: "followup" };
  const server = createServer({
    db,
    config,
    home,
    log,
    ensureOwner: false,
    // Cheap hashes keep the suite fast; the format and the default cost have their own test.
    passwordHashParams: { N: 1024, r: 8, p: 1 },
    staticDir: join(home, "no-web-build"),
    ...overrides,
    rateLimits: {
      loginPerIp: generousLimit,
      messagePerUser: generousLimit,
      messagePerIp: generousLimit,
      ...overrides.rateLimits,
    },
  });
  const listening = await server.listen(0, "127.0.0.1");
  cleanups.push(async () => {
    await listening.close();
    db.close();
  });
  return { url: listening.url, host: new URL(listening.url).host, server, db, home, log };
}

export interface Session {
  cookie: string;
  token: string;
  csrfToken: string;
  userId: string;
  setCookie: string;
}

export interface CallOptions {
  method?: string;
  body?: unknown;
  session?: Session;
  /** Send the session as a cookie (default) or as a bearer token. */
  as?: "cookie" | "bearer";
  /** Leave out the CSRF header on cookie requests. */
  noCsrf?: boolean;
  headers?: Record<string, string>;
}

/** Calls the API; cookie-authenticated state changes carry the CSRF token unless told otherwise. */
export async function call(base: string, path: string, options: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.body !== undefined) headers["content-type"] ??= "application/json";
  const method = options.method ?? (options.body === undefined ? "GET" : "POST");
  if (options.session) {
    if (options.as === "bearer") headers.authorization = `Bearer ${options.session.token}`;
    else {
      headers.cookie = options.session.cookie;
      if (!options.noCsrf && method !== "GET") headers["x-csrf-token"] = options.session.csrfToken;
    }
  }
  return fetch(base + path, {
    method,
    headers,
    body:
      options.body === undefined
        ? undefined
        : typeof options.body === "string"
          ? options.body
          : JSON.stringify(options.body),
  });
}

/** Reads `name=value` of the session cookie from a response's Set-Cookie headers. */
export function sessionCookieFrom(res: Response): { pair: string; raw: string } | undefined {
  const raw = res.headers.getSetCookie().find((c) => c.startsWith("dimsum_session="));
  return raw ? { pair: raw.split(";")[0] ?? "", raw } : undefined;
}

/** Logs in (or sets up, when `setup`) and returns the session. */
export async function login(
  base: string,
  username: string,
  password: string,
  path: "/api/auth/login" | "/api/auth/setup" = "/api/auth/login",
): Promise<Session> {
  const res = await call(base, path, { body: { username, password } });
  if (res.status !== 200 && res.status !== 201)
    throw new Error(`${path} failed: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { user: { id: string }; token: string; csrfToken: string };
  const cookie = sessionCookieFrom(res);
  if (!cookie) throw new Error("no session cookie");
  return {
    cookie: cookie.pair,
    setCookie: cookie.raw,
    token: body.token,
    csrfToken: body.csrfToken,
    userId: body.user.id,
  };
}

/** Sets up the owner and creates one more user per role given; returns their sessions. */
export async function withUsers(
  base: string,
  roles: Array<"admin" | "member" | "guest"> = [],
): Promise<{ owner: Session; users: Record<string, Session> }> {
  const owner = await login(base, "alice", "owner-password-1", "/api/auth/setup");
  const users: Record<string, Session> = {};
  for (const role of roles) {
    const res = await call(base, "/api/users", {
      session: owner,
      body: { username: `${role}-user`, password: `${role}-password-1`, role },
    });
    if (res.status !== 201) throw new Error(`creating ${role}: ${res.status} ${await res.text()}`);
    users[role] = await login(base, `${role}-user`, `${role}-password-1`);
  }
  return { owner, users };
}

/** A stdout/stderr stand-in that keeps what was written. */
export function sink(): { text: string; write: (s: string) => void } {
  const out = {
    text: "",
    write: (s: string) => {
      out.text += s;
    },
  };
  return out;
}

/** Polls `read` every 10 ms until it returns a value. */
export async function waitFor<T>(read: () => T | undefined): Promise<T> {
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 10));
  }
}
