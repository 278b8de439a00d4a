import { describe, expect, it } from "vitest";
import { call, login, sessionCookieFrom, startServer, withUsers } from "./helpers.js";

describe("first start and accounts", () => {
  it("needs setup until the owner exists, then refuses a second setup", async () => {
    const { url } = await startServer();
    expect(await (await call(url, "/api/auth/status")).json()).toMatchObject({
      needsSetup: true,
      signedIn: false,
    });
    const res = await call(url, "/api/auth/setup", {
      body: { username: "alice", password: "owner-password-1" },
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as {
      user: { username: string; role: string };
      token: string;
      csrfToken: string;
    };
    expect(body.user).toMatchObject({ username: "alice", role: "owner" });
    expect(body.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(body.csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await (await call(url, "/api/auth/status")).json()).toMatchObject({
      needsSetup: false,
      signedIn: false,
    });
    const again = await call(url, "/api/auth/setup", {
      body: { username: "mallory", password: "another-pass-1" },
    });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe("conflict");
  });

  it("validates setup input with the contract's issue list", async () => {
    const { url } = await startServer();
    const res = await call(url, "/api/auth/setup", { body: { username: "../x", password: "short" } });
    expect(res.status).toBe(400);
    const body = (await res.json()) as {
      error: { code: string; issues: Array<{ path: string; message: string }> };
    };
    expect(body.error.code).toBe("invalid");
    expect(body.error.issues.map((i) => i.path).sort()).toEqual(["password", "username"]);
  });

  it("stores the token hashed and the password as a salted scrypt string", async () => {
    const { url, db } = await startServer();
    const owner = await login(url, "alice", "owner-password-1", "/api/auth/setup");
    const user = db.prepare("SELECT password_hash FROM users WHERE username = 'alice'").get() as {
      password_hash: string;
    };
    expect(user.password_hash).toMatch(/^scrypt\$\d+\$\d+\$\d+\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(user.password_hash).not.toContain("owner-password-1");
    const rows = db.prepare("SELECT token_hash FROM auth_sessions").all() as Array<{ token_hash: string }>;
    expect(rows).toHaveLength(1);
    expect(rows[0]?.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows[0]?.token_hash).not.toBe(owner.token);
  });

  it("logs in, answers /me, and refuses a wrong password or unknown user with 401", async () => {
    const { url } = await startServer();
    await withUsers(url);
    const wrong = await call(url, "/api/auth/login", {
      body: { username: "alice", password: "nope-nope-nope" },
    });
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe("unauthenticated");
    expect(sessionCookieFrom(wrong)).toBeUndefined();
    const unknown = await call(url, "/api/auth/login", {
      body: { username: "bob", password: "owner-password-1" },
    });
    expect(unknown.status).toBe(401);

    const session = await login(url, "ALICE", "owner-password-1");
    const me = await call(url, "/api/auth/me", { session });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({
      user: { username: "alice", role: "owner" },
      csrfToken: session.csrfToken,
    });
    const bearer = await call(url, "/api/auth/me", { session, as: "bearer" });
    expect(bearer.status).toBe(200);
    expect((await call(url, "/api/auth/me")).status).toBe(401);
    expect(
      (await call(url, "/api/auth/me", { headers: { authorization: "Bearer not-a-token" } })).status,
    ).toBe(401);
  });

  it("sets an HttpOnly, SameSite=Lax, Path=/ cookie without Secure over plain HTTP", async () => {
    const { url } = await startServer();
    const owner = await login(url, "alice", "owner-password-1", "/api/auth/setup");
    const parts = owner.setCookie.split(";").map((p) => p.trim().toLowerCase());
    expect(parts).toContain("httponly");
    expect(parts).toContain("samesite=lax");
    expect(parts).toContain("path=/");
    expect(parts.some((p) => p.startsWith("max-age="))).toBe(true);
    expect(parts).not.toContain("secure");
  });

  it("marks the cookie Secure behind a trusted TLS proxy, and ignores the header otherwise", async () => {
    const untrusted = await startServer();
    await withUsers(untrusted.url);
    const plain = await call(untrusted.url, "/api/auth/login", {
      body: { username: "alice", password: "owner-password-1" },
      headers: { "x-forwarded-proto": "https" },
    });
    expect(sessionCookieFrom(plain)?.raw.toLowerCase()).not.toContain("secure");

    const trusted = await startServer({ trustProxy: true });
    await withUsers(trusted.url);
    const proxied = await call(trusted.url, "/api/auth/login", {
      body: { username: "alice", password: "owner-password-1" },
      headers: { "x-forwarded-proto": "https" },
    });
    expect(
      sessionCookieFrom(proxied)
        ?.raw.split(";")
        .map((p) => p.trim().toLowerCase()),
    ).toContain("secure");
  });

  it("logs out one session, lists and revokes sessions, and logs out everywhere", async () => {
    const { url } = await startServer();
    const first = await login(url, "alice", "owner-password-1", "/api/auth/setup");
    const second = await login(url, "alice", "owner-password-1");
    const third = await login(url, "alice", "owner-password-1");

    const listRes = await call(url, "/api/auth/sessions", { session: first });
    const list = (await listRes.json()) as Array<{
      id: string;
      current: boolean;
      expiresAt: number;
      lastSeenAt: number;
    }>;
    expect(list).toHaveLength(3);
    expect(list.filter((s) => s.current)).toHaveLength(1);
    expect(list[0]?.expiresAt).toBeGreaterThan(Date.now() + 13 * 24 * 3600 * 1000);

    const logout = await call(url, "/api/auth/logout", { session: third, method: "POST" });
    expect(logout.status).toBe(204);
    expect(sessionCookieFrom(logout)?.raw).toMatch(/Max-Age=0/i);
    expect((await call(url, "/api/auth/me", { session: third })).status).toBe(401);

    const secondId = (
      (await (await call(url, "/api/auth/sessions", { session: second })).json()) as Array<{
        id: string;
        current: boolean;
      }>
    ).find((s) => s.current)?.id;
    expect(secondId).toBeDefined();
    expect(
      (await call(url, `/api/auth/sessions/${secondId}`, { session: first, method: "DELETE" })).status,
    ).toBe(204);
    expect((await call(url, "/api/auth/me", { session: second })).status).toBe(401);
    expect((await call(url, "/api/auth/me", { session: first })).status).toBe(200);
    expect(
      (await call(url, "/api/auth/sessions/ses_unknown", { session: first, method: "DELETE" })).status,
    ).toBe(404);

    const fourth = await login(url, "alice", "owner-password-1");
    expect((await call(url, "/api/auth/logout-all", { session: first, method: "POST" })).status).toBe(204);
    expect((await call(url, "/api/auth/me", { session: first })).status).toBe(401);
    expect((await call(url, "/api/auth/me", { session: fourth })).status).toBe(401);
  });

  it("never lets one user revoke another user's session", async () => {
    const { url } = await startServer();
    const { owner, users } = await withUsers(url, ["member"]);
    const member = users.member!;
    const ownerSessionId = (
      (await (await call(url, "/api/auth/sessions", { session: owner })).json()) as Array<{ id: string }>
    )[0]?.id;
    expect(
      (await call(url, `/api/auth/sessions/${ownerSessionId}`, { session: member, method: "DELETE" })).status,
    ).toBe(404);
    expect((await call(url, "/api/auth/me", { session: owner })).status).toBe(200);
  });

  it("changes the caller's password, signing out their other sessions", async () => {
    const { url } = await startServer();
    const first = await login(url, "alice", "owner-password-1", "/api/auth/setup");
    const other = await login(url, "alice", "owner-password-1");
    const wrong = await call(url, "/api/auth/password", {
      session: first,
      body: { currentPassword: "not-it-at-all", newPassword: "brand-new-pass-2" },
    });
    expect(wrong.status).toBe(403);
    const ok = await call(url, "/api/auth/password", {
      session: first,
      body: { currentPassword: "owner-password-1", newPassword: "brand-new-pass-2" },
    });
    expect(ok.status).toBe(204);
    expect((await call(url, "/api/auth/me", { session: first })).status).toBe(200);
    expect((await call(url, "/api/auth/me", { session: other })).status).toBe(401);
    expect(
      (await call(url, "/api/auth/login", { body: { username: "alice", password: "owner-password-1" } }))
        .status,
    ).toBe(401);
    await login(url, "alice", "brand-new-pass-2");
  });

  it("refuses a password change without a session, or with a new password that is too short", async () => {
    const { url } = await startServer();
    const session = await login(url, "alice", "owner-password-1", "/api/auth/setup");
    const anonymous = await call(url, "/api/auth/password", {
      body: { currentPassword: "owner-password-1", newPassword: "brand-new-pass-2" },
    });
    expect(anonymous.status).toBe(401);
    const short = await call(url, "/api/auth/password", {
      session,
      body: { currentPassword: "owner-password-1", newPassword: "short" },
    });
    expect(short.status).toBe(400);
    const issues = ((await short.json()) as { error: { issues: Array<{ path: string }> } }).error.issues;
    expect(issues.map((i) => i.path)).toEqual(["newPassword"]);
    await login(url, "alice", "owner-password-1");
  });
});

describe("ensureOwner at start", () => {
  it("prints a one-time password for user owner when no account exists", async () => {
    const { url, log } = await startServer({ ensureOwner: true });
    const line = log.lines.find((l) => l.includes("one-time password"));
    const password = /one-time password: (\S+)/.exec(line ?? "")?.[1];
    expect(password).toMatch(/^[A-Za-z0-9]{20}$/);
    expect(await (await call(url, "/api/auth/status")).json()).toMatchObject({
      needsSetup: false,
      signedIn: false,
    });
    expect(line).toContain("Settings → Account");
    const session = await login(url, "owner", password!);
    expect(await (await call(url, "/api/auth/me", { session })).json()).toMatchObject({
      user: { role: "owner", mustChangePassword: true },
    });
    // Until the owner chooses a password, every sign-in says so; afterwards none does.
    const changed = await call(url, "/api/auth/password", {
      session,
      body: { currentPassword: password, newPassword: "my-own-password-1" },
    });
    expect(changed.status).toBe(204);
    expect(await (await call(url, "/api/auth/me", { session })).json()).toMatchObject({
      user: { mustChangePassword: false },
    });
    const again = await call(url, "/api/auth/login", {
      body: { username: "owner", password: "my-own-password-1" },
    });
    expect(((await again.json()) as { user: { mustChangePassword: boolean } }).user.mustChangePassword).toBe(
      false,
    );
  });

  it("uses DIMSUM_OWNER_PASSWORD when set and prints no password", async () => {
    const { url, log } = await startServer({
      ensureOwner: true,
      env: { DIMSUM_OWNER_PASSWORD: "from-the-env-123" },
    });
    expect(log.lines.join("\n")).not.toContain("from-the-env-123");
    expect(log.lines.join("\n")).not.toContain("one-time password");
    const session = await login(url, "owner", "from-the-env-123");
    expect(await (await call(url, "/api/auth/me", { session })).json()).toMatchObject({
      user: { mustChangePassword: false },
    });
  });
});
