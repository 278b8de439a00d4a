/**
 * Two real servers whose accounts, sessions, API tokens and settings live in one PostgreSQL database,
 * as two instances behind a load balancer: what one does, the other sees at once (a sign-in, a
 * revocation, a deleted token, a saved provider key), and a revoked session's socket on the other
 * instance closes at its next heartbeat. Skipped where no PostgreSQL server is reachable.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { postgresAccounts } from "../../src/server/accounts.js";
import { type AuthEvent, AuthEvents } from "../../src/server/auth/auth-events.js";
import { relayAuthEvents } from "../../src/server/auth/auth-relay.js";
import { createPostgresSettingsStore } from "../../src/server/settings/pg-settings-store.js";
import { openSecretBox } from "../../src/server/settings/secret-box.js";
import { openRedisRelay } from "../../src/store/redis/redis-relay.js";
import { openTestPostgres, postgresAvailable } from "../support/postgres.js";
import { REDIS_URL, redisAvailable, testChannel } from "../support/redis.js";
import { call, login, startServer, withUsers } from "./helpers.js";
import { connect, FakeTeam } from "./ws-helpers.js";

const disposals: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const dispose of disposals.splice(0).reverse()) await dispose();
});

async function twoInstances(options: { heartbeatMs?: number; relay?: boolean } = {}) {
  const pg = await openTestPostgres();
  disposals.push(() => pg.dispose());
  // The instances share the secret key (as they must to read each other's sealed keys).
  const box = openSecretBox(mkdtempSync(join(tmpdir(), "dimsum-shared-key-")));
  const channel = testChannel();
  const instance = async () => {
    const authEvents = new AuthEvents((err) => {
      throw err;
    });
    if (options.relay) {
      const relay = await openRedisRelay<AuthEvent>(REDIS_URL, { channel });
      const stop = relayAuthEvents(authEvents, relay);
      disposals.push(async () => {
        stop();
        await relay.close();
      });
    }
    return startServer({
      accounts: postgresAccounts(pg),
      settings: createPostgresSettingsStore(pg, box),
      events: new FakeTeam(),
      authEvents,
      ws: { heartbeatMs: options.heartbeatMs ?? 50 },
    });
  };
  const a = await instance();
  const b = await instance();
  return { pg, a, b };
}

describe.skipIf(!postgresAvailable)("two servers on one PostgreSQL for accounts", () => {
  it("a sign-in on one works on the other; signing out there ends it everywhere at once", async () => {
    const { a, b } = await twoInstances();
    const { owner } = await withUsers(a.url);
    expect(await (await call(b.url, "/api/auth/status")).json()).toMatchObject({
      needsSetup: false,
      signedIn: false,
    });
    expect(
      (await call(b.url, "/api/auth/setup", { body: { username: "x", password: "x-password-1" } })).status,
    ).toBe(409);
    const me = (await (await call(b.url, "/api/auth/me", { session: owner })).json()) as {
      user: { id: string };
    };
    expect(me.user.id).toBe(owner.userId);

    // The same account signs in on B too; logging out everywhere on A ends B's session.
    const onB = await login(b.url, "alice", "owner-password-1");
    const socket = connect(b.url, { cookie: onB.cookie, origin: `http://${b.host}` });
    await socket.next((f) => f.type === "ready");
    expect((await call(a.url, "/api/auth/logout-all", { session: owner, method: "POST" })).status).toBe(204);
    expect((await call(b.url, "/api/auth/me", { session: onB })).status).toBe(401);
    expect((await call(b.url, "/api/auth/me", { session: owner })).status).toBe(401);
    // B heard no event (it happened on A): its heartbeat re-reads the session and closes the socket.
    expect((await socket.closed).code).toBe(4401);
  });

  it("an API token made on one authenticates on the other until it is deleted", async () => {
    const { a, b } = await twoInstances();
    const { users } = await withUsers(a.url, ["member"]);
    const member = users.member;
    if (!member) throw new Error("no member");
    const created = (await (
      await call(a.url, "/api/tokens", { session: member, body: { name: "ci" } })
    ).json()) as {
      id: string;
      token: string;
    };
    expect(await b.server.authenticateApiToken(`Bearer ${created.token}`)).toEqual({
      userId: member.userId,
      role: "member",
    });
    expect(
      (await call(b.url, `/api/tokens/${created.id}`, { session: member, method: "DELETE" })).status,
    ).toBe(204);
    expect(await a.server.authenticateApiToken(`Bearer ${created.token}`)).toBeUndefined();
  });

  it("a provider key and default model saved on one are what the other resolves models with", async () => {
    const { a, b, pg } = await twoInstances();
    const { owner } = await withUsers(a.url);
    const saved = await call(a.url, "/api/settings", {
      session: owner,
      method: "PUT",
      body: {
        defaultModel: "openai:gpt-4o",
        providers: [{ name: "openai", apiKey: "sk-shared-0123456789" }],
      },
    });
    expect(saved.status).toBe(200);
    const status = (await (await call(b.url, "/api/models/status", { session: owner })).json()) as {
      ready: boolean;
      defaultModel: string;
    };
    expect(status).toMatchObject({ ready: true, defaultModel: "openai:gpt-4o" });
    expect(await b.server.services.settings.getProviderKey("openai")).toBe("sk-shared-0123456789");
    const rows = await pg.many("SELECT * FROM provider_settings");
    expect(JSON.stringify(rows)).not.toContain("0123456789");
  });

  it.skipIf(!redisAvailable)(
    "with auth events relayed, a logout on one closes the other's sockets at once",
    async () => {
      // A heartbeat far beyond the test: only the relayed event can close the socket in time.
      const { a, b } = await twoInstances({ heartbeatMs: 600_000, relay: true });
      const { owner } = await withUsers(a.url);
      const socket = connect(b.url, { cookie: owner.cookie, origin: `http://${b.host}` });
      await socket.next((f) => f.type === "ready");
      expect((await call(a.url, "/api/auth/logout", { session: owner, method: "POST" })).status).toBe(204);
      expect(await socket.closed).toEqual({ code: 4401, reason: "signed out" });
    },
  );
});
