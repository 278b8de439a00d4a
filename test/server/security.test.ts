import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CONTENT_SECURITY_POLICY } from "../../src/server/security/headers.js";
import { call, login, startServer, tempDir, withUsers } from "./helpers.js";

const loginBody = (username: string) => ({ username, password: "wrong-password-123" });

describe("CSRF", () => {
  it("refuses cookie-authenticated state changes without the token or with a wrong one", async () => {
    const { url } = await startServer();
    const { owner } = await withUsers(url);
    const body = { name: "ci" };
    const missing = await call(url, "/api/tokens", { session: owner, body, noCsrf: true });
    expect(missing.status).toBe(403);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe("forbidden");
    const wrong = await call(url, "/api/tokens", {
      session: owner,
      body,
      noCsrf: true,
      headers: { "x-csrf-token": "A".repeat(43) },
    });
    expect(wrong.status).toBe(403);
    expect((await call(url, "/api/tokens", { session: owner, body })).status).toBe(201);
    // Reads need no token.
    expect((await call(url, "/api/tokens", { session: owner })).status).toBe(200);
  });

  it("refuses a foreign Origin even with the right token, and accepts this server's own", async () => {
    const { url, host } = await startServer();
    const { owner } = await withUsers(url);
    const foreign = await call(url, "/api/tokens", {
      session: owner,
      body: { name: "x" },
      headers: { origin: "https://evil.example" },
    });
    expect(foreign.status).toBe(403);
    const nullOrigin = await call(url, "/api/tokens", {
      session: owner,
      body: { name: "x" },
      headers: { origin: "null" },
    });
    expect(nullOrigin.status).toBe(403);
    const own = await call(url, "/api/tokens", {
      session: owner,
      body: { name: "x" },
      headers: { origin: `http://${host}` },
    });
    expect(own.status).toBe(201);
    // Login from a foreign page is refused too (login CSRF).
    const crossLogin = await call(url, "/api/auth/login", {
      body: { username: "alice", password: "owner-password-1" },
      headers: { origin: "https://evil.example" },
    });
    expect(crossLogin.status).toBe(403);
  });

  it("exempts bearer-authenticated requests", async () => {
    const { url } = await startServer();
    const { owner } = await withUsers(url);
    const res = await call(url, "/api/tokens", { session: owner, as: "bearer", body: { name: "script" } });
    expect(res.status).toBe(201);
  });

  it("lets a browser with a stale cookie log in again without a CSRF token", async () => {
    const { url } = await startServer();
    const { owner } = await withUsers(url);
    const res = await call(url, "/api/auth/login", {
      body: { username: "alice", password: "owner-password-1" },
      headers: { cookie: owner.cookie },
    });
    expect(res.status).toBe(200);
  });

  it("refuses non-JSON bodies on JSON routes (HTML forms cannot post JSON)", async () => {
    const { url } = await startServer();
    const res = await call(url, "/api/auth/login", {
      body: "username=alice&password=owner-password-1",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(400);
    const malformed = await call(url, "/api/auth/login", { body: "{not json" });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { error: { code: string } }).error.code).toBe("invalid");
  });
});

describe("rate limits", () => {
  it("limits logins per IP with 429 and Retry-After, ignoring X-Forwarded-For by default", async () => {
    const { url } = await startServer({ rateLimits: { loginPerIp: { capacity: 3, perMinute: 3 } } });
    await withUsers(url); // the setup call takes one token from this address too
    for (let i = 0; i < 2; i++) {
      const res = await call(url, "/api/auth/login", {
        body: loginBody(`user${i}`),
        headers: { "x-forwarded-for": `10.0.0.${i}` },
      });
      expect(res.status).toBe(401);
    }
    const limited = await call(url, "/api/auth/login", {
      body: { username: "alice", password: "owner-password-1" },
      headers: { "x-forwarded-for": "10.9.9.9" },
    });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(((await limited.json()) as { error: { code: string } }).error.code).toBe("rate_limited");
  });

  it("believes X-Forwarded-For only behind a trusted proxy", async () => {
    const { url } = await startServer({
      trustProxy: true,
      rateLimits: { loginPerIp: { capacity: 3, perMinute: 3 } },
    });
    await withUsers(url);
    for (let i = 0; i < 6; i++) {
      const res = await call(url, "/api/auth/login", {
        body: loginBody(`user${i}`),
        headers: { "x-forwarded-for": `203.0.113.7, 10.0.0.${i}` },
      });
      expect(res.status).toBe(401);
    }
    const sameIp = async (n: number) =>
      call(url, "/api/auth/login", {
        body: loginBody(`someone${n}`),
        headers: { "x-forwarded-for": "10.0.0.42" },
      });
    for (let n = 0; n < 3; n++) expect((await sameIp(n)).status).toBe(401);
    expect((await sameIp(3)).status).toBe(429);
  });

  it("slows down guesses per (address, username); the real user signs in from elsewhere", async () => {
    // Default pair throttle (5 free failures); the per-address ceiling is out of the way here.
    const { url } = await startServer({ trustProxy: true });
    await withUsers(url);
    const from = (address: string, password: string, username = "alice") =>
      call(url, "/api/auth/login", {
        body: { username, password },
        headers: { "x-forwarded-for": address },
      });
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await from("10.1.0.1", "wrong-password-123")).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429, 429, 429]);
    // Waiting: even the right password from the guessing address waits (it proves nothing yet).
    const waiting = await from("10.1.0.1", "owner-password-1", "ALICE");
    expect(waiting.status).toBe(429);
    expect(Number(waiting.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(((await waiting.json()) as { error: { message: string } }).error.message).not.toContain("alice");
    // The real user, from their own (fresh) address, is not locked out.
    expect((await from("10.1.0.99", "owner-password-1")).status).toBe(200);
    // The guessing address may still try other names, and a wrong password elsewhere counts apart.
    expect((await from("10.1.0.1", "wrong-password-123", "bob")).status).toBe(401);
    expect((await from("10.1.0.98", "wrong-password-123")).status).toBe(401);
  });

  it("guesses sent in parallel are counted before their passwords are checked", async () => {
    const { url } = await startServer();
    await withUsers(url);
    const statuses = await Promise.all(
      Array.from({ length: 12 }, () =>
        call(url, "/api/auth/login", { body: loginBody("alice") }).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(7);
  });

  it("wrong current passwords on a password change are throttled per address too", async () => {
    const { url } = await startServer({ rateLimits: { loginPairs: { freeFailures: 2 } } });
    const { owner } = await withUsers(url);
    const change = (currentPassword: string) =>
      call(url, "/api/auth/password", {
        session: owner,
        body: { currentPassword, newPassword: "owner-password-2" },
      }).then((r) => r.status);
    expect([
      await change("nope-nope-1"),
      await change("nope-nope-2"),
      await change("owner-password-1"),
    ]).toEqual([403, 403, 429]);
  });
});

describe("body size and headers", () => {
  it("answers 413 for bodies over the limit, with or without Content-Length", async () => {
    const { url } = await startServer({ maxBodyBytes: 1024 });
    const big = JSON.stringify({ username: "a", password: "x".repeat(5000) });
    const res = await call(url, "/api/auth/login", { body: big });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("too_large");
    const chunks = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 4; i++) controller.enqueue(new TextEncoder().encode("x".repeat(600)));
        controller.close();
      },
    });
    const streamed = await fetch(`${url}/api/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: chunks,
      duplex: "half",
    } as RequestInit);
    expect(streamed.status).toBe(413);
  });

  it("sends the security headers on API answers, errors and pages", async () => {
    const { url } = await startServer();
    for (const res of [
      await call(url, "/api/auth/status"),
      await call(url, "/api/auth/me"),
      await call(url, "/"),
    ]) {
      expect(res.headers.get("content-security-policy")).toBe(CONTENT_SECURITY_POLICY);
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(res.headers.get("permissions-policy")).toContain("camera=()");
    }
    expect(CONTENT_SECURITY_POLICY).toBe(
      "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'",
    );
  });

  it("answers unknown API routes with the JSON 404 after authentication", async () => {
    const { url } = await startServer();
    const { owner } = await withUsers(url);
    expect((await call(url, "/api/nope")).status).toBe(401);
    const res = await call(url, "/api/nope", { session: owner });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("not_found");
  });
});

describe("TLS", () => {
  it("serves HTTPS directly and marks the session cookie Secure", async () => {
    const dir = tempDir("dimsum-tls-");
    execFileSync(
      "openssl",
      ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"].concat([
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
      ]),
      { stdio: "ignore" },
    );
    const cert = readFileSync(join(dir, "cert.pem"));
    const { url } = await startServer({ tls: { key: readFileSync(join(dir, "key.pem")), cert } });
    expect(url.startsWith("https://")).toBe(true);
    const payload = JSON.stringify({ username: "alice", password: "owner-password-1" });
    const setCookie = await new Promise<string[]>((resolve, reject) => {
      const req = httpsRequest(
        `${url}/api/auth/setup`,
        {
          method: "POST",
          ca: cert,
          headers: { "content-type": "application/json" },
          checkServerIdentity: () => undefined,
        },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.headers["set-cookie"] ?? []));
        },
      );
      req.on("error", reject);
      req.end(payload);
    });
    const cookie = setCookie.find((c) => c.startsWith("dimsum_session="));
    expect(cookie?.split(";").map((p) => p.trim().toLowerCase())).toContain("secure");
    expect(cookie?.toLowerCase()).toContain("httponly");
  });
});

// A login that succeeds after the others keeps the helper honest (the limiter is per server).
it("fresh servers have fresh limits", async () => {
  const { url } = await startServer({ rateLimits: { loginPerIp: { capacity: 1, perMinute: 1 } } });
  await login(url, "alice", "owner-password-1", "/api/auth/setup");
  expect((await call(url, "/api/auth/login", { body: loginBody("alice") })).status).toBe(429);
});
