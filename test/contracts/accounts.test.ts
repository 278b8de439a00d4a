/**
 * The accounts repositories on both backends: users, login sessions, API tokens, settings with sealed
 * provider keys, the MCP servers saved from the UI and each person's sealed MCP sign-ins. Each test
 * gets an empty migrated database; rows are read back raw where a secret must not be in the clear.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import {
  ApiTokenStore,
  createPostgresApiTokenStore,
  MAX_TOKENS_PER_USER,
} from "../../src/server/auth/api-token-store.js";
import { type AuthEvent, AuthEvents } from "../../src/server/auth/auth-events.js";
import { createPostgresSessionStore, SessionStore } from "../../src/server/auth/session-store.js";
import { createPostgresUserStore, UserStore } from "../../src/server/auth/user-store.js";
import { personalMcpCredentials } from "../../src/server/mcp-credentials.js";
import { SqliteMcpCredentials } from "../../src/server/settings/mcp-credential-store.js";
import {
  createPostgresMcpCredentials,
  createPostgresSettingsStore,
} from "../../src/server/settings/pg-settings-store.js";
import { openSecretBox, type SecretBox } from "../../src/server/settings/secret-box.js";
import { type SettingsRepository, SettingsStore } from "../../src/server/settings/settings-store.js";
import { type Backend, describeBackends } from "./backends.js";

const FAST_HASH = { N: 1024, r: 8, p: 1 };

/** Every accounts repository over one backend, with the events they emit. */
function accountsOn(backend: Backend, options: { ttlMs?: number } = {}) {
  const events = new AuthEvents((err) => {
    throw err;
  });
  const seen: AuthEvent[] = [];
  events.on((event) => seen.push(event));
  const box = openSecretBox(mkdtempSync(join(tmpdir(), "dimsum-accounts-box-")));
  const sessionOptions = { events, ...(options.ttlMs !== undefined ? { ttlMs: options.ttlMs } : {}) };
  const userOptions = { events, hashParams: FAST_HASH };
  if (backend.kind === "sqlite") {
    const { db } = backend;
    return {
      seen,
      box,
      users: new UserStore(db, userOptions),
      sessions: new SessionStore(db, sessionOptions),
      tokens: new ApiTokenStore(db),
      settings: new SettingsStore(db, box),
      credentials: new SqliteMcpCredentials(db),
      rows: async (sql: string, params: unknown[] = []) =>
        db.prepare(sql.replace(/\$\d+/g, "?")).all(...params) as Array<Record<string, unknown>>,
    };
  }
  const { db } = backend;
  return {
    seen,
    box,
    users: createPostgresUserStore(db, userOptions),
    sessions: createPostgresSessionStore(db, sessionOptions),
    tokens: createPostgresApiTokenStore(db),
    settings: createPostgresSettingsStore(db, box),
    credentials: createPostgresMcpCredentials(db),
    rows: (sql: string, params: unknown[] = []) => db.many<Record<string, unknown>>(sql, params),
  };
}

/** A second settings store over the same database (as another server instance has). */
function otherSettings(backend: Backend, box: SecretBox): SettingsRepository {
  return backend.kind === "sqlite"
    ? new SettingsStore(backend.db, box)
    : createPostgresSettingsStore(backend.db, box);
}

async function errorOf(promise: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await promise;
  } catch (err) {
    return err as { code?: string; message: string };
  }
  throw new Error("expected a rejection");
}

describeBackends("accounts: users", (open) => {
  it("creates accounts with roles, counts them, lists them by username whatever the case", async () => {
    const { users } = accountsOn(await open());
    expect(await users.count()).toBe(0);
    const bob = await users.create({ username: "bob", password: "bob-password-1", role: "member" });
    const ann = await users.create({ username: "Ann", password: "ann-password-1", role: "admin" });
    await users.create({ username: "carl", password: "carl-password-1", role: "member" });
    expect(bob).toMatchObject({ username: "bob", role: "member" });
    expect(bob.createdAt).toBe(bob.updatedAt);
    expect(await users.count()).toBe(3);
    expect(await users.countRole("member")).toBe(2);
    expect(await users.countRole("owner")).toBe(0);
    expect((await users.list()).map((u) => u.username)).toEqual(["Ann", "bob", "carl"]);
    expect(await users.get(ann.id)).toEqual(ann);
    expect(await users.get("nobody")).toBeUndefined();
  });

  it("refuses a taken username in any case with a conflict, and stores no password in clear", async () => {
    const backend = await open();
    const { users, rows } = accountsOn(backend);
    await users.create({ username: "Dora", password: "dora-password-1", role: "member" });
    const error = await errorOf(
      users.create({ username: "dORA", password: "other-password", role: "guest" }),
    );
    expect(error.code).toBe("conflict");
    expect(error.message).toContain("taken");
    expect(await users.count()).toBe(1);
    const [row] = await rows("SELECT password_hash FROM users");
    expect(String(row?.password_hash)).not.toContain("dora-password-1");
    expect(String(row?.password_hash)).toMatch(/^scrypt/);
  });

  it("verifies logins (username in any case), wrong passwords and unknown names alike", async () => {
    const { users } = accountsOn(await open());
    const eve = await users.create({ username: "Eve", password: "eve-password-1", role: "member" });
    expect(await users.verifyLogin("eve", "eve-password-1")).toEqual(eve);
    expect(await users.verifyLogin("EVE", "eve-password-1")).toEqual(eve);
    expect(await users.verifyLogin("eve", "wrong-password")).toBeUndefined();
    expect(await users.verifyLogin("mallory", "eve-password-1")).toBeUndefined();
    expect(await users.checkPassword(eve.id, "eve-password-1")).toBe(true);
    expect(await users.checkPassword(eve.id, "nope-nope-nope")).toBe(false);
    expect(await users.checkPassword("nobody", "eve-password-1")).toBe(false);
  });

  it("creates the first account once, as owner, racing setups included, with a one-time password", async () => {
    const backend = await open();
    const { users } = accountsOn(backend);
    // Several stores, as several instances have, all asking at once.
    const stores = [users, ...Array.from({ length: 7 }, () => accountsOn(backend).users)];
    const racing = await Promise.all(
      stores.map((store, i) =>
        store.createFirst(
          { username: i === 0 ? "owner" : `racer${i}`, password: "racing-password" },
          { oneTimePassword: true },
        ),
      ),
    );
    const created = racing.filter((u) => u !== undefined);
    expect(created).toHaveLength(1);
    const owner = created[0];
    if (!owner) throw new Error("no owner");
    expect(owner.role).toBe("owner");
    expect(await users.count()).toBe(1);
    expect(await users.hasOneTimePassword(owner.id)).toBe(true);
    expect(await users.createFirst({ username: "late", password: "late-password" })).toBeUndefined();

    // A role change keeps the one-time password; a new password ends it.
    await users.update(owner.id, { role: "owner" });
    expect(await users.hasOneTimePassword(owner.id)).toBe(true);
    await users.update(owner.id, { password: "chosen-password-1" });
    expect(await users.hasOneTimePassword(owner.id)).toBe(false);
    expect(await users.verifyLogin(owner.username, "chosen-password-1")).toBeDefined();
  });

  it("a first account without a one-time password has none", async () => {
    const { users } = accountsOn(await open());
    const owner = await users.createFirst({ username: "owner", password: "from-the-env-1" });
    expect(owner && (await users.hasOneTimePassword(owner.id))).toBe(false);
  });

  it("updates role and password, telling what changed after it changed", async () => {
    const { users, seen } = accountsOn(await open());
    const bob = await users.create({ username: "bob", password: "bob-password-1", role: "admin" });
    expect(await users.update(bob.id, { role: "admin" })).toMatchObject({ role: "admin" });
    expect(seen).toEqual([]);
    const demoted = await users.update(bob.id, { role: "member" });
    expect(demoted).toMatchObject({ id: bob.id, role: "member" });
    expect(demoted?.updatedAt).toBeGreaterThanOrEqual(bob.updatedAt);
    expect(seen).toEqual([{ type: "role_changed", userId: bob.id, role: "member", previousRole: "admin" }]);
    await users.update(bob.id, { password: "bob-password-2" });
    expect(seen.at(-1)).toEqual({ type: "password_changed", userId: bob.id });
    expect(await users.verifyLogin("bob", "bob-password-1")).toBeUndefined();
    expect(await users.verifyLogin("bob", "bob-password-2")).toMatchObject({ role: "member" });
    expect(await users.update("nobody", { role: "guest" })).toBeUndefined();
    expect(seen).toHaveLength(2);
  });

  it("deletes an account with its sessions, tokens and MCP sign-ins, once", async () => {
    const { users, sessions, tokens, credentials, seen } = accountsOn(await open());
    const bob = await users.create({ username: "bob", password: "bob-password-1", role: "member" });
    const ann = await users.create({ username: "ann", password: "ann-password-1", role: "member" });
    const login = await sessions.create(bob.id);
    const token = await tokens.create(bob.id, "script");
    await credentials.write(bob.id, "notes", "sealed-bob");
    await credentials.write(ann.id, "notes", "sealed-ann");
    expect(await users.delete(bob.id)).toBe(true);
    expect(seen.at(-1)).toEqual({ type: "user_deleted", userId: bob.id });
    expect(await users.delete(bob.id)).toBe(false);
    expect(seen.filter((e) => e.type === "user_deleted")).toHaveLength(1);
    expect(await users.get(bob.id)).toBeUndefined();
    expect(await sessions.authenticate(login.token)).toBeUndefined();
    expect(await sessions.isActive(login.session.id)).toBe(false);
    expect(await tokens.authenticate(token.token)).toBeUndefined();
    expect(await credentials.read(bob.id, "notes")).toBeUndefined();
    expect(await credentials.read(ann.id, "notes")).toBe("sealed-ann");
  });

  it("keeps each person's language for the web UI, replaced by a new choice and gone with the account", async () => {
    const { users, rows } = accountsOn(await open());
    const ann = await users.create({ username: "ann", password: "ann-password-1", role: "member" });
    const bob = await users.create({ username: "bob", password: "bob-password-1", role: "member" });
    expect(await users.getLocale(ann.id)).toBeUndefined();
    await users.setLocale(ann.id, "zh-CN");
    expect(await users.getLocale(ann.id)).toBe("zh-CN");
    expect(await users.getLocale(bob.id)).toBeUndefined();
    await users.setLocale(ann.id, "en");
    expect(await users.getLocale(ann.id)).toBe("en");
    await users.setLocale(bob.id, "zh-CN");
    expect(await users.delete(ann.id)).toBe(true);
    expect(await users.getLocale(ann.id)).toBeUndefined();
    expect(await rows("SELECT key FROM server_settings WHERE key = $1", [`locale:${ann.id}`])).toEqual([]);
    expect(await users.getLocale(bob.id)).toBe("zh-CN");
  });
});

describeBackends("accounts: login sessions", (open) => {
  it("authenticates a token to its session and account; only its hash is stored", async () => {
    const { users, sessions, rows } = accountsOn(await open());
    const bob = await users.create({ username: "bob", password: "bob-password-1", role: "admin" });
    const { token, session } = await sessions.create(bob.id, { userAgent: "x".repeat(400), ip: "10.0.0.1" });
    expect(session.userAgent).toHaveLength(300);
    expect(session.expiresAt).toBe(session.createdAt + sessions.ttlMs);
    const found = await sessions.authenticate(token);
    expect(found?.session).toEqual(session);
    expect(found?.user).toEqual(bob);
    expect(found?.refreshed).toBe(false);
    expect(JSON.stringify(await rows("SELECT * FROM auth_sessions"))).not.toContain(token);
    expect(await sessions.authenticate(`${token}x`)).toBeUndefined();
    expect(await sessions.authenticate("")).toBeUndefined();
    expect(await sessions.authenticate("t".repeat(201))).toBeUndefined();
    expect(await sessions.isActive(session.id)).toBe(true);
    expect(await sessions.isActive("ses_unknown")).toBe(false);
  });

  it("slides the expiry once its last use is a minute old, and refuses expired sessions", async () => {
    const backend = await open();
    const { users, sessions, rows } = accountsOn(backend);
    const bob = await users.create({ username: "bob", password: "bob-password-1", role: "member" });
    const { token, session } = await sessions.create(bob.id);
    const past = Date.now() - 5 * 60_000;
    const sql = "UPDATE auth_sessions SET last_seen_at = $1, expires_at = $2 WHERE id = $3";
    await rows(`${sql} RETURNING id`, [past, past + sessions.ttlMs, session.id]);
    const slid = await sessions.authenticate(token);
    expect(slid?.refreshed).toBe(true);
    expect(slid?.session.lastSeenAt).toBeGreaterThan(past);
    const [row] = await rows("SELECT last_seen_at, expires_at FROM auth_sessions WHERE id = $1", [
      session.id,
    ]);
    expect(Number(row?.expires_at)).toBe(slid?.session.expiresAt);
    expect((await sessions.authenticate(token))?.refreshed).toBe(false);

    await rows(`${sql} RETURNING id`, [past, Date.now() - 1, session.id]);
    expect(await sessions.authenticate(token)).toBeUndefined();
    expect(await sessions.isActive(session.id)).toBe(false);
    expect(await sessions.listForUser(bob.id)).toEqual([]);
    // Expired sessions are swept when someone signs in.
    await sessions.create(bob.id);
    expect(await rows("SELECT id FROM auth_sessions WHERE id = $1", [session.id])).toEqual([]);
  });

  it("lists a user's live sessions, most recently used first", async () => {
    const { users, sessions, rows } = accountsOn(await open());
    const bob = await users.create({ username: "bob", password: "bob-password-1", role: "member" });
    const ann = await users.create({ username: "ann", password: "ann-password-1", role: "member" });
    const first = await sessions.create(bob.id);
    const second = await sessions.create(bob.id);
    await sessions.create(ann.id);
    await rows("UPDATE auth_sessions SET last_seen_at = last_seen_at - 1000 WHERE id = $1 RETURNING id", [
      first.session.id,
    ]);
    expect((await sessions.listForUser(bob.id)).map((s) => s.id)).toEqual([
      second.session.id,
      first.session.id,
    ]);
    expect(await sessions.listForUser("nobody")).toEqual([]);
  });

  it("revokes one session (only its owner's) and all but one, telling which ended and why", async () => {
    const { users, sessions, seen } = accountsOn(await open());
    const ann = await users.create({ username: "ann", password: "ann-password-1", role: "member" });
    const eve = await users.create({ username: "eve", password: "eve-password-1", role: "member" });
    const [a, b, c] = [
      await sessions.create(ann.id),
      await sessions.create(ann.id),
      await sessions.create(ann.id),
    ];
    expect(await sessions.revoke(eve.id, a.session.id)).toBe(false);
    expect(await sessions.revoke(ann.id, a.session.id, "logout")).toBe(true);
    expect(await sessions.revoke(ann.id, a.session.id)).toBe(false);
    expect(await sessions.authenticate(a.token)).toBeUndefined();
    expect(await sessions.revokeAll(ann.id, c.session.id, "password_changed")).toBe(1);
    expect(await sessions.revokeAll(ann.id, c.session.id)).toBe(0);
    expect(seen).toEqual([
      { type: "sessions_ended", userId: ann.id, sessionIds: [a.session.id], reason: "logout" },
      { type: "sessions_ended", userId: ann.id, sessionIds: [b.session.id], reason: "password_changed" },
    ]);
    expect(await sessions.isActive(b.session.id)).toBe(false);
    expect(await sessions.isActive(c.session.id)).toBe(true);
    expect(await sessions.revokeAll(ann.id)).toBe(1);
    expect(await sessions.authenticate(c.token)).toBeUndefined();
    expect(seen.at(-1)).toMatchObject({ sessionIds: [c.session.id], reason: "revoked" });
  });

  it("a session revoked through one store is refused at once by another over the same database", async () => {
    const backend = await open();
    const here = accountsOn(backend);
    const there = accountsOn(backend);
    const bob = await here.users.create({ username: "bob", password: "bob-password-1", role: "member" });
    const { token, session } = await here.sessions.create(bob.id);
    expect(await there.sessions.authenticate(token)).toBeDefined();
    expect(await here.sessions.revoke(bob.id, session.id)).toBe(true);
    expect(await there.sessions.authenticate(token)).toBeUndefined();
    expect(await there.sessions.isActive(session.id)).toBe(false);
  });

  it("honours a short idle window", async () => {
    const backend = await open();
    const { users, sessions } = accountsOn(backend, { ttlMs: 1 });
    const bob = await users.create({ username: "bob", password: "bob-password-1", role: "member" });
    const { token, session } = await sessions.create(bob.id);
    expect(session.expiresAt).toBe(session.createdAt + 1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await sessions.authenticate(token)).toBeUndefined();
  });
});

describeBackends("accounts: API tokens", (open) => {
  it("issues tokens shown once, lists them newest first, authenticates and records use", async () => {
    const { users, tokens, rows } = accountsOn(await open());
    const bob = await users.create({ username: "bob", password: "bob-password-1", role: "member" });
    const first = await tokens.create(bob.id, "first");
    await rows("UPDATE api_tokens SET created_at = created_at - 1000 WHERE id = $1 RETURNING id", [first.id]);
    const second = await tokens.create(bob.id, "second");
    expect(first.token).toMatch(/^dsk_[A-Za-z0-9_-]{43}$/);
    expect(first.preview).toBe(`dsk_…${first.token.slice(-4)}`);
    const listed = await tokens.list(bob.id);
    expect(listed.map((t) => t.name)).toEqual(["second", "first"]);
    expect(listed[0]).toEqual({
      id: second.id,
      name: "second",
      createdAt: second.createdAt,
      lastUsedAt: undefined,
      preview: second.preview,
    });
    expect(JSON.stringify(await rows("SELECT * FROM api_tokens"))).not.toContain(first.token);

    expect(await tokens.authenticate(`Bearer ${first.token}`)).toEqual({
      actor: { userId: bob.id, role: "member" },
      user: bob,
    });
    expect(await tokens.authenticate(first.token)).toBeDefined();
    expect(await tokens.authenticate(`Bearer dsk_${"x".repeat(43)}`)).toBeUndefined();
    expect(await tokens.authenticate("Bearer not-a-token")).toBeUndefined();
    expect(await tokens.authenticate(undefined)).toBeUndefined();
    const used = (await tokens.list(bob.id)).find((t) => t.id === first.id);
    expect(used?.lastUsedAt).toBeGreaterThan(0);
  });

  it("deletes only the owner's token, and a deleted token stops authenticating", async () => {
    const { users, tokens } = accountsOn(await open());
    const bob = await users.create({ username: "bob", password: "bob-password-1", role: "member" });
    const eve = await users.create({ username: "eve", password: "eve-password-1", role: "member" });
    const token = await tokens.create(bob.id, "script");
    expect(await tokens.delete(eve.id, token.id)).toBe(false);
    expect(await tokens.authenticate(token.token)).toBeDefined();
    expect(await tokens.delete(bob.id, token.id)).toBe(true);
    expect(await tokens.delete(bob.id, token.id)).toBe(false);
    expect(await tokens.authenticate(token.token)).toBeUndefined();
    expect(await tokens.list(bob.id)).toEqual([]);
  });

  it(`stops at ${MAX_TOKENS_PER_USER} tokens per person, even when they are created at once`, async () => {
    const { users, tokens } = accountsOn(await open());
    const bob = await users.create({ username: "bob", password: "bob-password-1", role: "member" });
    const ann = await users.create({ username: "ann", password: "ann-password-1", role: "member" });
    const results = await Promise.allSettled(
      Array.from({ length: MAX_TOKENS_PER_USER + 5 }, (_, i) => tokens.create(bob.id, `t${i}`)),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(MAX_TOKENS_PER_USER);
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(refused).toHaveLength(5);
    expect(refused.every((r) => (r.reason as { code?: string }).code === "conflict")).toBe(true);
    expect(await tokens.list(bob.id)).toHaveLength(MAX_TOKENS_PER_USER);
    expect(await tokens.create(ann.id, "mine")).toMatchObject({ name: "mine" });
  });
});

describeBackends("accounts: settings", (open) => {
  it("stores, replaces and clears the default model", async () => {
    const { settings } = accountsOn(await open());
    expect(await settings.getDefaultModel()).toBeUndefined();
    expect((await settings.update({ defaultModel: "openai:gpt-4o" })).defaultModel).toBe("openai:gpt-4o");
    expect((await settings.update({ defaultModel: "anthropic:claude-x" })).defaultModel).toBe(
      "anthropic:claude-x",
    );
    expect(await settings.getDefaultModel()).toBe("anthropic:claude-x");
    expect((await settings.update({})).defaultModel).toBe("anthropic:claude-x");
    expect((await settings.update({ defaultModel: null })).defaultModel).toBeUndefined();
  });

  it("keeps provider keys sealed in the row, previews them, and opens them only for model resolution", async () => {
    const { settings, rows } = accountsOn(await open());
    const key = "sk-0123456789abcdef-secret";
    const view = await settings.update({
      defaultModel: "openai:gpt-4o",
      providers: [
        { name: "openai", apiKey: key },
        { name: "my-llm", baseUrl: "http://127.0.0.1:9999/v1", apiKey: "local-key-1234567" },
      ],
    });
    expect(view.providers).toEqual([
      {
        name: "my-llm",
        baseUrl: "http://127.0.0.1:9999/v1",
        protocol: "openai",
        hasKey: true,
        keyPreview: "loc…4567",
        builtin: false,
      },
      {
        name: "openai",
        baseUrl: undefined,
        protocol: "openai",
        hasKey: true,
        keyPreview: "sk-…cret",
        builtin: true,
      },
    ]);
    const stored = await rows("SELECT * FROM provider_settings");
    expect(JSON.stringify(stored)).not.toContain("0123456789abcdef");
    expect(JSON.stringify(stored)).not.toContain("local-key-1234567");
    expect(String(stored.find((r) => r.name === "openai")?.api_key_enc)).toMatch(/^v1:/);

    expect(await settings.getProviderKey("openai")).toBe(key);
    expect(await settings.getProviderKey("nobody")).toBeUndefined();
    const env = await settings.effectiveEnv({ OPENAI_API_KEY: "from-env", PATH: "/bin" });
    expect(env).toMatchObject({ OPENAI_API_KEY: key, MY_LLM_API_KEY: "local-key-1234567", PATH: "/bin" });
    const home = mkdtempSync(join(tmpdir(), "dimsum-accounts-config-"));
    const config = await settings.effectiveConfig(loadConfig({ cwd: home, env: { DIMSUM_HOME: home } }));
    expect(config.defaultModel).toBe("openai:gpt-4o");
    expect(config.env.OPENAI_API_KEY).toBe(key);
    expect(config.file.providers["my-llm"]).toEqual({
      baseUrl: "http://127.0.0.1:9999/v1",
      protocol: "openai",
      apiKeyEnv: "MY_LLM_API_KEY",
    });
  });

  it("keeps a key unless given one, replaces the provider list, saves and removes one at a time", async () => {
    const { settings } = accountsOn(await open());
    await settings.update({
      providers: [{ name: "openai", apiKey: "sk-first-key-123456" }, { name: "gemini" }],
    });
    // Without apiKey the key stays; the list replaces the set of providers.
    const replaced = await settings.update({ providers: [{ name: "openai", baseUrl: "http://proxy:1/v1" }] });
    expect(replaced.providers.map((p) => [p.name, p.baseUrl, p.hasKey])).toEqual([
      ["openai", "http://proxy:1/v1", true],
    ]);
    expect(await settings.getProviderKey("openai")).toBe("sk-first-key-123456");
    expect((await settings.effectiveEnv({})).OPENAI_BASE_URL).toBe("http://proxy:1/v1");

    // One provider at a time: the others stay; an alias names the same provider.
    const saved = await settings.saveProvider({ name: "dashscope", apiKey: "ds-key-1234567890" });
    expect(saved.providers.map((p) => p.name)).toEqual(["openai", "qwen"]);
    expect(await settings.getProviderKey("qwen")).toBe("ds-key-1234567890");
    await settings.saveProvider({ name: "openai", apiKey: null });
    expect(await settings.getProviderKey("openai")).toBeUndefined();
    expect((await settings.view()).providers.find((p) => p.name === "openai")).toMatchObject({
      hasKey: false,
      keyPreview: undefined,
      baseUrl: "http://proxy:1/v1",
    });
    expect((await settings.removeProvider("dashscope")).providers.map((p) => p.name)).toEqual(["openai"]);
  });

  it("refuses a custom provider without a base URL, and stores nothing of a refused update", async () => {
    const { settings } = accountsOn(await open());
    await settings.update({ defaultModel: "openai:gpt-4o" });
    const error = await errorOf(
      settings.update({ defaultModel: "x:y", providers: [{ name: "openai" }, { name: "homemade" }] }),
    );
    expect(error.code).toBe("invalid");
    expect(error.message).toContain("needs a baseUrl");
    expect(await settings.view()).toEqual({ defaultModel: "openai:gpt-4o", providers: [] });
    expect((await errorOf(settings.saveProvider({ name: "homemade" }))).code).toBe("invalid");
    // A provider the config file defines needs none.
    const ok = await settings.saveProvider({ name: "homemade", fromConfig: { protocol: "anthropic" } });
    expect(ok.providers).toMatchObject([{ name: "homemade", protocol: "anthropic", baseUrl: undefined }]);
  });

  it("two stores saving providers at once over one database lose neither save", async () => {
    const backend = await open();
    const a = accountsOn(backend);
    const other = otherSettings(backend, a.box);
    await Promise.all([
      a.settings.saveProvider({ name: "openai", apiKey: "sk-openai-key-12345" }),
      other.saveProvider({ name: "anthropic", apiKey: "sk-anthropic-key-123" }),
      a.settings.saveProvider({ name: "gemini", apiKey: "gm-gemini-key-12345" }),
    ]);
    expect((await a.settings.view()).providers.map((p) => p.name)).toEqual(["anthropic", "gemini", "openai"]);
    expect(await other.getProviderKey("gemini")).toBe("gm-gemini-key-12345");
  });
});

describeBackends("accounts: MCP server settings", (open) => {
  it("saves stdio servers with a sealed env and remote ones as given, replaces by name, removes", async () => {
    const { settings, rows } = accountsOn(await open());
    expect(await settings.mcp.configs()).toEqual([]);
    const stdio = await settings.mcp.add({
      name: "ev",
      transport: "stdio",
      command: "node",
      args: ["server.js"],
      env: { EV_TOKEN: "very-secret-token" },
    });
    expect(stdio).toMatchObject({ name: "ev", transport: "stdio", env: { EV_TOKEN: "very-secret-token" } });
    await settings.mcp.add({ name: "notes", url: "https://mcp.example/mcp", oauth: {} });
    const [row] = await rows("SELECT value_json FROM server_settings WHERE key = 'mcpServers'");
    expect(String(row?.value_json)).not.toContain("very-secret-token");
    const configs = await settings.mcp.configs();
    expect(configs.map((c) => c.name)).toEqual(["ev", "notes"]);
    expect(configs[0]).toMatchObject({ transport: "stdio", command: "node", args: ["server.js"] });
    expect(configs[0]?.transport === "stdio" ? configs[0].env : {}).toEqual({
      EV_TOKEN: "very-secret-token",
    });
    expect(configs[1]).toMatchObject({
      transport: "http",
      url: "https://mcp.example/mcp",
      oauth: { grant: "authorization_code" },
    });

    await settings.mcp.add({ name: "ev", transport: "stdio", command: "python", args: [] });
    const replaced = await settings.mcp.configs();
    expect(replaced.map((c) => c.name)).toEqual(["notes", "ev"]);
    expect(replaced[1]).toMatchObject({ command: "python", env: {} });

    expect(await settings.mcp.remove("ev")).toBe(true);
    expect(await settings.mcp.remove("ev")).toBe(false);
    expect((await settings.mcp.configs()).map((c) => c.name)).toEqual(["notes"]);
  });

  it("servers added at once through two stores are all kept", async () => {
    const backend = await open();
    const a = accountsOn(backend);
    const other = otherSettings(backend, a.box);
    await Promise.all(
      ["one", "two", "three", "four"].map((name, i) =>
        (i % 2 === 0 ? a.settings : other).mcp.add({ name, url: `https://${name}.example/mcp` }),
      ),
    );
    expect((await a.settings.mcp.configs()).map((c) => c.name).sort()).toEqual([
      "four",
      "one",
      "three",
      "two",
    ]);
  });
});

describeBackends("accounts: remote A2A agent settings", (open) => {
  it("saves agents with a sealed token, refuses a second of one name, lists no token, removes", async () => {
    const backend = await open();
    const { settings, rows, box } = accountsOn(backend);
    expect(await settings.remoteAgents.list()).toEqual([]);
    expect(
      await settings.remoteAgents.add({
        name: "desk",
        url: "https://a2a.example/desk",
        token: "desk-secret-token",
        description: "Orders",
      }),
    ).toBe(true);
    expect(
      await settings.remoteAgents.add({ name: "off", url: "https://a2a.example/off", enabled: false }),
    ).toBe(true);
    expect(await settings.remoteAgents.add({ name: "desk", url: "https://a2a.example/other" })).toBe(false);
    const [row] = await rows("SELECT value_json FROM server_settings WHERE key = 'remoteAgents'");
    expect(String(row?.value_json)).not.toContain("desk-secret-token");
    const listed = await otherSettings(backend, box).remoteAgents.list();
    expect(JSON.stringify(listed)).not.toContain("desk-secret-token");
    expect(listed).toEqual([
      { name: "desk", url: "https://a2a.example/desk", description: "Orders", hasToken: true, enabled: true },
      { name: "off", url: "https://a2a.example/off", hasToken: false, enabled: false },
    ]);
    // Runs get the enabled ones, the token opened into the header.
    expect(await settings.remoteAgents.configs()).toEqual([
      {
        name: "desk",
        url: "https://a2a.example/desk",
        headers: { authorization: "Bearer desk-secret-token" },
        description: "Orders",
        source: "Settings → Remote agents",
      },
    ]);
    // Changed in place: a new token sealed, the description removed, turned off and on.
    expect(await settings.remoteAgents.update("desk", { token: "new-desk-token", description: null })).toBe(
      true,
    );
    expect(await settings.remoteAgents.update("nobody", { enabled: false })).toBe(false);
    expect(await settings.remoteAgents.update("off", { enabled: true, url: "https://a2a.example/on" })).toBe(
      true,
    );
    const [changedRow] = await rows("SELECT value_json FROM server_settings WHERE key = 'remoteAgents'");
    expect(String(changedRow?.value_json)).not.toContain("new-desk-token");
    expect(await settings.remoteAgents.configs()).toEqual([
      {
        name: "desk",
        url: "https://a2a.example/desk",
        headers: { authorization: "Bearer new-desk-token" },
        source: "Settings → Remote agents",
      },
      { name: "off", url: "https://a2a.example/on", headers: {}, source: "Settings → Remote agents" },
    ]);
    expect(await settings.remoteAgents.update("desk", { token: null, enabled: false })).toBe(true);
    expect((await settings.remoteAgents.list())[0]).toEqual({
      name: "desk",
      url: "https://a2a.example/desk",
      hasToken: false,
      enabled: false,
    });
    expect(await settings.remoteAgents.remove("desk")).toBe(true);
    expect(await settings.remoteAgents.remove("desk")).toBe(false);
    expect((await settings.remoteAgents.list()).map((a) => a.name)).toEqual(["off"]);
  });

  it("agents added at once through two stores are all kept", async () => {
    const backend = await open();
    const a = accountsOn(backend);
    const other = otherSettings(backend, a.box);
    await Promise.all(
      ["one", "two", "three", "four"].map((name, i) =>
        (i % 2 === 0 ? a.settings : other).remoteAgents.add({ name, url: `https://${name}.example/a2a` }),
      ),
    );
    expect((await a.settings.remoteAgents.list()).map((r) => r.name).sort()).toEqual([
      "four",
      "one",
      "three",
      "two",
    ]);
  });
});

describeBackends("accounts: MCP sign-ins per person", (open) => {
  it("keeps one sealed record per person and server, replaced on save, gone on delete", async () => {
    const { credentials } = accountsOn(await open());
    expect(await credentials.read("ann", "notes")).toBeUndefined();
    await credentials.write("ann", "notes", "sealed-1");
    await credentials.write("ann", "calendar", "sealed-2");
    await credentials.write("bob", "notes", "sealed-3");
    expect(await credentials.read("ann", "notes")).toBe("sealed-1");
    await credentials.write("ann", "notes", "sealed-4");
    expect(await credentials.read("ann", "notes")).toBe("sealed-4");
    expect(await credentials.read("bob", "notes")).toBe("sealed-3");
    await credentials.remove("ann", "notes");
    await credentials.remove("ann", "notes");
    expect(await credentials.read("ann", "notes")).toBeUndefined();
    expect(await credentials.read("ann", "calendar")).toBe("sealed-2");
  });

  it("the server's per-person stores seal what they save: tokens never in the row in clear", async () => {
    const { credentials, box, rows } = accountsOn(await open());
    const forPerson = personalMcpCredentials(credentials, () => box);
    const ann = forPerson("ann");
    const state = {
      url: "https://mcp.example/mcp",
      tokens: { access_token: "at-very-secret", token_type: "Bearer", refresh_token: "rt-very-secret" },
    };
    await ann.save("notes", state);
    expect(await ann.load("notes")).toEqual(state);
    expect(await forPerson("bob").load("notes")).toBeUndefined();
    const stored = JSON.stringify(await rows("SELECT key, value_json FROM server_settings"));
    expect(stored).not.toContain("very-secret");
    expect(stored).not.toContain("ann");
    // Another instance with the same key reads the same sign-in.
    expect(await personalMcpCredentials(credentials, () => box)("ann").load("notes")).toEqual(state);
    await ann.delete("notes");
    expect(await ann.load("notes")).toBeUndefined();
  });
});
