/**
 * Single sign-on against a real OpenID Connect provider (`oidc-provider`) on loopback: the account is
 * made on first sign-in with the role its groups map to, linked by verified email, and every
 * tampered or replayed answer is refused before a session exists.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type LocalOidcProvider, startLocalOidcProvider, Walker } from "../support/local-oidc-provider.js";
import { call, login, type Session, startServer, type TestServer, withUsers } from "./helpers.js";
import { connect } from "./ws-helpers.js";

let server: TestServer;
let idp: LocalOidcProvider;
let owner: Session;

const ACCOUNTS = {
  wang: { email: "wang.wei@corp.example", name: "王伟", groups: ["staff", "dimsum-admins"] },
  li: { email: "li.na@corp.example", groups: ["staff"] },
  outsider: { email: "eve@elsewhere.example" },
  unverified: { email: "zhao@corp.example", emailVerified: false },
  invited: { email: "sun@corp.example" },
};

async function addProvider(overrides: Record<string, unknown> = {}): Promise<Response> {
  return call(server.url, "/api/sso/providers/corp", {
    method: "PUT",
    session: owner,
    body: {
      name: "Corp SSO",
      issuer: idp.issuer,
      clientId: idp.clientId,
      clientSecret: idp.clientSecret,
      allowedDomains: ["corp.example"],
      roleClaim: "groups",
      roleMap: { "dimsum-admins": "admin", staff: "member" },
      newAccounts: "create",
      ...overrides,
    },
  });
}

/** Walks one sign-in as `accountId`; returns Dimsum's answer to the callback. */
async function signIn(
  accountId: string,
  walker = new Walker(),
): Promise<{ res: Response; callback: string }> {
  const callback = await walker.toCallback(
    `${server.url}/api/auth/sso/corp/start?returnTo=%2Fsettings`,
    accountId,
    `${server.url}/api/auth/sso/corp/callback`,
  );
  return { res: await walker.go(callback), callback };
}

function refusal(res: Response): string {
  expect(res.status).toBe(302);
  const location = new URL(res.headers.get("location") ?? "", server.url);
  expect(location.pathname).toBe("/");
  return location.searchParams.get("signInError") ?? "";
}

function sessionOf(res: Response): string | undefined {
  return res.headers
    .getSetCookie()
    .find((c) => c.startsWith("dimsum_session="))
    ?.split(";")[0];
}

async function me(cookie: string) {
  const res = await call(server.url, "/api/auth/me", { headers: { cookie } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { user: { username: string; role: string } }).user;
}

beforeEach(async () => {
  server = await startServer();
  ({ owner } = await withUsers(server.url));
  idp = await startLocalOidcProvider([`${server.url}/api/auth/sso/corp/callback`], ACCOUNTS);
});

afterEach(async () => {
  await idp.close();
});

describe("single sign-on over OpenID Connect", () => {
  it("makes the account on first sign-in with the mapped role, and signs the same account in again", async () => {
    expect((await addProvider()).status).toBe(201);
    const status = (await (await call(server.url, "/api/auth/status")).json()) as {
      providers: Array<{ id: string; name: string }>;
    };
    expect(status.providers).toEqual([{ id: "corp", name: "Corp SSO" }]);

    const first = await signIn("wang");
    expect(first.res.status).toBe(302);
    expect(first.res.headers.get("location")).toBe("/settings");
    const cookie = sessionOf(first.res);
    expect(cookie).toBeDefined();
    expect(await me(cookie as string)).toMatchObject({ username: "wang.wei@corp.example", role: "admin" });

    const member = await signIn("li");
    expect(await me(sessionOf(member.res) as string)).toMatchObject({ role: "member" });

    // Again: the same account (linked by the provider's subject), no second one.
    const again = await signIn("wang");
    expect(await me(sessionOf(again.res) as string)).toMatchObject({ username: "wang.wei@corp.example" });
    const users = (await (await call(server.url, "/api/users", { session: owner })).json()) as Array<{
      username: string;
    }>;
    expect(users.map((u) => u.username).sort()).toEqual([
      "alice",
      "li.na@corp.example",
      "wang.wei@corp.example",
    ]);
    // Each sign-in is in the audit log, naming the provider.
    const audit = (await (
      await call(server.url, "/api/audit?action=auth.sign_in", { session: owner })
    ).json()) as { entries: Array<{ actorName: string | null; after?: { provider?: string } }> };
    expect(
      audit.entries
        .filter((e) => e.after?.provider === "corp")
        .map((e) => e.actorName)
        .sort(),
    ).toEqual(["li.na@corp.example", "wang.wei@corp.example", "wang.wei@corp.example"]);
  });

  it("refuses a wrong state, a replayed code, a bad nonce, an expired or foreign-signed ID token", async () => {
    await addProvider();
    // A callback whose state is not this browser's attempt.
    const walker = new Walker();
    const callback = await walker.toCallback(
      `${server.url}/api/auth/sso/corp/start`,
      "li",
      `${server.url}/api/auth/sso/corp/callback`,
    );
    const forged = new URL(callback);
    forged.searchParams.set("state", "forged-state");
    const wrongState = await walker.go(forged.href);
    expect(refusal(wrongState)).toMatch(/does not belong to this sign-in/);
    expect(sessionOf(wrongState)).toBeUndefined();

    // The same callback twice (with the attempt's cookie put back): the second is refused.
    const replayer = new Walker();
    const start = await replayer.go(`${server.url}/api/auth/sso/corp/start`);
    const attempt =
      start.headers
        .getSetCookie()
        .find((c) => c.startsWith("dimsum_sso="))
        ?.split(";")[0] ?? "";
    const code = await replayer.toCallback(
      start.headers.get("location") ?? "",
      "li",
      `${server.url}/api/auth/sso/corp/callback`,
    );
    const once = await fetch(code, { headers: { cookie: attempt }, redirect: "manual" });
    expect(sessionOf(once)).toBeDefined();
    const twice = await fetch(code, { headers: { cookie: attempt }, redirect: "manual" });
    expect(refusal(twice)).toMatch(/used already/);
    expect(sessionOf(twice)).toBeUndefined();

    for (const [tamper, why] of [
      ["nonce", /nonce/i],
      ["expired", /exp|expired|timestamp/i],
      ["foreign-key", /signature/i],
    ] as const) {
      idp.tamper = tamper;
      const { res } = await signIn("li");
      expect(refusal(res), tamper).toMatch(why);
      expect(sessionOf(res), tamper).toBeUndefined();
    }
    idp.tamper = undefined;
    expect(sessionOf((await signIn("li")).res)).toBeDefined();
  });

  it("refuses an email outside the allowed domains, an unverified email, and strangers when only invited people may", async () => {
    await addProvider();
    expect(refusal((await signIn("outsider")).res)).toMatch(/only @corp\.example addresses may/);
    expect(refusal((await signIn("unverified")).res)).toMatch(/verified email/);

    await addProvider({ newAccounts: "invited", clientSecret: undefined });
    expect(refusal((await signIn("invited")).res)).toMatch(/no account for sun@corp\.example/);
    // Invited: an admin makes the account with the email as its username; the sign-in links to it.
    const made = await call(server.url, "/api/users", {
      session: owner,
      body: { username: "sun@corp.example", password: "temporary-password-1", role: "guest" },
    });
    expect(made.status).toBe(201);
    const linked = await signIn("invited");
    const sunCookie = sessionOf(linked.res) as string;
    expect(await me(sunCookie)).toMatchObject({ username: "sun@corp.example" });
    const socket = connect(server.url, { cookie: sunCookie, origin: server.url });
    await socket.next((f) => f.type === "ready");
    // Disabling the account ends its SSO session and its open socket at once.
    const sun = ((await made.json()) as { id: string }).id;
    await call(server.url, `/api/users/${sun}`, {
      method: "PATCH",
      session: owner,
      body: { disabled: true },
    });
    expect(await socket.closed).toEqual({ code: 4401, reason: "account disabled" });
    expect((await call(server.url, "/api/auth/me", { headers: { cookie: sunCookie } })).status).toBe(401);
    // And it does not get in through the provider again.
    expect(refusal((await signIn("invited")).res)).toMatch(/sun@corp\.example is disabled/);
    // Nobody made an account for the outsider on the way.
    const users = (await (await call(server.url, "/api/users", { session: owner })).json()) as Array<{
      username: string;
    }>;
    expect(users.map((u) => u.username)).not.toContain("eve@elsewhere.example");
  });

  it("accepts tokens signed with a rotated key", async () => {
    await addProvider();
    expect(sessionOf((await signIn("li")).res)).toBeDefined();
    await idp.rotateKey();
    expect(sessionOf((await signIn("li")).res)).toBeDefined();
  });

  it("keeps password sign-in for the owner only when it is turned off, and keeps secrets out of the API", async () => {
    const created = await call(server.url, "/api/users", {
      session: owner,
      body: { username: "bob", password: "bob-password-1", role: "member" },
    });
    expect(created.status).toBe(201);
    const refused = await call(server.url, "/api/sso/password-sign-in", {
      method: "PUT",
      session: owner,
      body: { enabled: false },
    });
    expect(refused.status).toBe(409);
    await addProvider();
    const off = await call(server.url, "/api/sso/password-sign-in", {
      method: "PUT",
      session: owner,
      body: { enabled: false },
    });
    expect(off.status).toBe(204);
    const bob = await call(server.url, "/api/auth/login", {
      body: { username: "bob", password: "bob-password-1" },
    });
    expect(bob.status).toBe(403);
    expect(((await bob.json()) as { error: { message: string } }).error.message).toMatch(
      /password sign-in is turned off/,
    );
    await login(server.url, "alice", "owner-password-1");

    const settings = await call(server.url, "/api/sso", { session: owner });
    const text = await settings.text();
    expect(text).not.toContain(idp.clientSecret);
    expect(JSON.parse(text)).toMatchObject({
      passwordSignIn: false,
      providers: [{ id: "corp", hasSecret: true, roleClaim: "groups" }],
    });
    const stored = server.db.prepare("SELECT value_json FROM server_settings WHERE key = 'sso'").get() as {
      value_json: string;
    };
    expect(stored.value_json).not.toContain(idp.clientSecret);
    const member = await withMember();
    expect((await call(server.url, "/api/sso", { session: member })).status).toBe(403);
  });
});

async function withMember(): Promise<Session> {
  await call(server.url, "/api/sso/password-sign-in", {
    method: "PUT",
    session: owner,
    body: { enabled: true },
  });
  await call(server.url, "/api/users", {
    session: owner,
    body: { username: "carol", password: "carol-password-1", role: "member" },
  });
  return login(server.url, "carol", "carol-password-1");
}
