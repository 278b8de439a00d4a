import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { call, login, startServer, withUsers } from "./helpers.js";

type UserView = { id: string; username: string; role: string };

describe("users", () => {
  it("lets owners and admins manage users and refuses members and guests", async () => {
    const { url } = await startServer();
    const { owner, users } = await withUsers(url, ["admin", "member", "guest"]);
    for (const who of [users.member!, users.guest!]) {
      expect((await call(url, "/api/users", { session: who })).status).toBe(403);
      const create = await call(url, "/api/users", {
        session: who,
        body: { username: "sneaky", password: "sneaky-pass-1", role: "admin" },
      });
      expect(create.status).toBe(403);
    }
    const list = (await (await call(url, "/api/users", { session: users.admin! })).json()) as UserView[];
    expect(list.map((u) => `${u.username}:${u.role}`).sort()).toEqual([
      "admin-user:admin",
      "alice:owner",
      "guest-user:guest",
      "member-user:member",
    ]);
    expect(JSON.stringify(list)).not.toContain("scrypt");

    const created = await call(url, "/api/users", {
      session: users.admin!,
      body: { username: "carol", password: "carol-pass-12", role: "member" },
    });
    expect(created.status).toBe(201);
    const carol = (await created.json()) as UserView;
    const dup = await call(url, "/api/users", {
      session: owner,
      body: { username: "CAROL", password: "carol-pass-12", role: "member" },
    });
    expect(dup.status).toBe(409);

    const patched = await call(url, `/api/users/${carol.id}`, {
      session: users.admin!,
      method: "PATCH",
      body: { role: "guest" },
    });
    expect(((await patched.json()) as UserView).role).toBe("guest");
    const member = list.find((u) => u.username === "member-user")!;
    expect(
      (
        await call(url, `/api/users/${member.id}`, {
          session: users.member!,
          method: "PATCH",
          body: { role: "admin" },
        })
      ).status,
    ).toBe(403);
    expect(
      (await call(url, `/api/users/${carol.id}`, { session: users.guest!, method: "DELETE" })).status,
    ).toBe(403);
    expect(
      (await call(url, `/api/users/${carol.id}`, { session: users.admin!, method: "DELETE" })).status,
    ).toBe(204);
    expect((await call(url, `/api/users/${carol.id}`, { session: owner, method: "DELETE" })).status).toBe(
      404,
    );
  });

  it("keeps admins away from owners and the last owner in place", async () => {
    const { url } = await startServer();
    const { owner, users } = await withUsers(url, ["admin"]);
    const ownerId = owner.userId;
    const makeOwner = await call(url, "/api/users", {
      session: users.admin!,
      body: { username: "boss", password: "boss-pass-123", role: "owner" },
    });
    expect(makeOwner.status).toBe(403);
    expect(
      (
        await call(url, `/api/users/${ownerId}`, {
          session: users.admin!,
          method: "PATCH",
          body: { password: "taken-over-1" },
        })
      ).status,
    ).toBe(403);
    expect(
      (await call(url, `/api/users/${ownerId}`, { session: users.admin!, method: "DELETE" })).status,
    ).toBe(403);
    expect((await call(url, `/api/users/${ownerId}`, { session: owner, method: "DELETE" })).status).toBe(409);
    const demote = await call(url, `/api/users/${ownerId}`, {
      session: owner,
      method: "PATCH",
      body: { role: "admin" },
    });
    expect(demote.status).toBe(409);
    const empty = await call(url, `/api/users/${ownerId}`, { session: owner, method: "PATCH", body: {} });
    expect(empty.status).toBe(400);
  });

  it("signs a user out everywhere when an admin resets their password, and drops them on delete", async () => {
    const { url } = await startServer();
    const { owner, users } = await withUsers(url, ["member"]);
    const member = users.member!;
    await call(url, `/api/users/${member.userId}`, {
      session: owner,
      method: "PATCH",
      body: { password: "reset-pass-123" },
    });
    expect((await call(url, "/api/auth/me", { session: member })).status).toBe(401);
    const again = await login(url, "member-user", "reset-pass-123");
    expect(
      (await call(url, `/api/users/${member.userId}`, { session: owner, method: "DELETE" })).status,
    ).toBe(204);
    expect((await call(url, "/api/auth/me", { session: again })).status).toBe(401);
  });

  it("takes a role change into account on the next request", async () => {
    const { url } = await startServer();
    const { owner, users } = await withUsers(url, ["member"]);
    expect((await call(url, "/api/settings", { session: users.member! })).status).toBe(403);
    await call(url, `/api/users/${users.member!.userId}`, {
      session: owner,
      method: "PATCH",
      body: { role: "admin" },
    });
    expect((await call(url, "/api/settings", { session: users.member! })).status).toBe(200);
  });
});

describe("settings", () => {
  it("stores provider keys server-side, encrypted, and never returns them in full", async () => {
    const { url, server, db, home } = await startServer();
    const { owner, users } = await withUsers(url, ["member"]);
    const key = "sk-test-0123456789abcdefSECRET";
    const put = await call(url, "/api/settings", {
      session: owner,
      method: "PUT",
      body: {
        defaultModel: "openai:gpt-4o",
        providers: [
          { name: "openai", apiKey: key },
          {
            name: "my-llm",
            baseUrl: "http://127.0.0.1:9999/v1",
            protocol: "openai",
            apiKey: "local-key-1234567",
          },
        ],
      },
    });
    expect(put.status).toBe(200);
    const text = JSON.stringify(await (await call(url, "/api/settings", { session: owner })).json());
    expect(text).not.toContain(key);
    expect(text).not.toContain("0123456789abcdef");
    const view = JSON.parse(text) as {
      defaultModel: string;
      providers: Array<{
        name: string;
        hasKey: boolean;
        keyPreview: string;
        baseUrl: string | null;
        protocol: string;
      }>;
    };
    expect(view.defaultModel).toBe("openai:gpt-4o");
    expect(view.providers.find((p) => p.name === "openai")).toMatchObject({
      hasKey: true,
      keyPreview: "sk-…CRET",
    });
    expect(view.providers.find((p) => p.name === "my-llm")).toMatchObject({
      baseUrl: "http://127.0.0.1:9999/v1",
      hasKey: true,
    });

    // Not in the database in the clear either.
    const rows = db.prepare("SELECT api_key_enc FROM provider_settings").all() as Array<{
      api_key_enc: string;
    }>;
    expect(JSON.stringify(rows)).not.toContain("0123456789abcdef");
    expect(readFileSync(join(home, "secret.key"), "utf8").trim()).toMatch(/^[A-Za-z0-9+/]{43}=$/);

    const settings = server.services.settings;
    expect(await settings.getProviderKey("openai")).toBe(key);
    const env = await settings.effectiveEnv({ OPENAI_API_KEY: "from-env", PATH: "/bin" });
    expect(env).toMatchObject({ OPENAI_API_KEY: key, MY_LLM_API_KEY: "local-key-1234567", PATH: "/bin" });
    const config = await settings.effectiveConfig(server.services.config);
    expect(config.defaultModel).toBe("openai:gpt-4o");
    expect(config.file.providers["my-llm"]).toMatchObject({
      baseUrl: "http://127.0.0.1:9999/v1",
      apiKeyEnv: "MY_LLM_API_KEY",
    });

    // Omitting apiKey keeps the key; the list replaces the set of providers.
    await call(url, "/api/settings", {
      session: owner,
      method: "PUT",
      body: { providers: [{ name: "openai" }] },
    });
    expect(await settings.getProviderKey("openai")).toBe(key);
    expect((await settings.view()).providers.map((p) => p.name)).toEqual(["openai"]);
    await call(url, "/api/settings", {
      session: owner,
      method: "PUT",
      body: { providers: [{ name: "openai", apiKey: null }] },
    });
    expect(await settings.getProviderKey("openai")).toBeUndefined();

    expect((await call(url, "/api/settings", { session: users.member! })).status).toBe(403);
    const memberPut = await call(url, "/api/settings", {
      session: users.member!,
      method: "PUT",
      body: { defaultModel: "x:y" },
    });
    expect(memberPut.status).toBe(403);
  });

  it("validates settings input", async () => {
    const { url } = await startServer();
    const { owner } = await withUsers(url);
    const bad = await call(url, "/api/settings", {
      session: owner,
      method: "PUT",
      body: { defaultModel: "no-colon", providers: [{ name: "x", baseUrl: "file:///etc/passwd" }] },
    });
    expect(bad.status).toBe(400);
    const issues = ((await bad.json()) as { error: { issues: Array<{ path: string }> } }).error.issues.map(
      (i) => i.path,
    );
    expect(issues).toEqual(expect.arrayContaining(["defaultModel", "providers.0.baseUrl"]));
    const noUrl = await call(url, "/api/settings", {
      session: owner,
      method: "PUT",
      body: { providers: [{ name: "custom" }] },
    });
    expect(noUrl.status).toBe(400);
  });
});

describe("providers and model readiness", () => {
  it("lists every built-in provider with where its key comes from, never the key itself", async () => {
    const envKey = "sk-env-0123456789abcdefENVKEY";
    const { url } = await startServer({ env: { OPENAI_API_KEY: envKey, DIMSUM_MODEL: "openai:gpt-4o" } });
    const { owner, users } = await withUsers(url, ["member"]);
    const res = await call(url, "/api/settings", { session: owner });
    const text = await res.text();
    expect(text).not.toContain("0123456789abcdef");
    const view = JSON.parse(text) as {
      defaultModelSource: string;
      providers: Array<{ name: string; keySource: string; hasKey: boolean; keyEnv: string | null }>;
      modelStatus: { ready: boolean };
    };
    expect(view.providers.map((p) => p.name)).toEqual([
      "openai",
      "anthropic",
      "gemini",
      "deepseek",
      "qwen",
      "kimi",
      "glm",
      "minimax",
      "xai",
      "perplexity",
      "openrouter",
      "ollama",
    ]);
    expect(view.providers[0]).toMatchObject({
      keySource: "environment",
      hasKey: true,
      keyEnv: "OPENAI_API_KEY",
    });
    expect(view.providers.find((p) => p.name === "anthropic")).toMatchObject({
      keySource: "none",
      hasKey: false,
    });
    expect(view.defaultModelSource).toBe("environment");
    expect(view.modelStatus.ready).toBe(true);

    // One provider saved on its own leaves the others alone; a saved key wins over the environment.
    const saved = await call(url, "/api/settings/providers/deepseek", {
      session: owner,
      method: "PUT",
      body: { apiKey: "sk-deepseek-0123456789" },
    });
    expect(saved.status).toBe(200);
    await call(url, "/api/settings/providers/kimi", {
      session: owner,
      method: "PUT",
      body: { baseUrl: "http://127.0.0.1:9/v1" },
    });
    const after = (await saved.json()) as {
      providers: Array<{ name: string; keySource: string; keyPreview: string }>;
    };
    expect(after.providers.find((p) => p.name === "deepseek")).toMatchObject({
      keySource: "settings",
      keyPreview: "sk-…6789",
    });
    const both = (await (await call(url, "/api/settings", { session: owner })).json()) as {
      providers: Array<{ name: string; keySource: string; baseUrl: string; baseUrlSource: string }>;
    };
    expect(both.providers.find((p) => p.name === "deepseek")?.keySource).toBe("settings");
    expect(both.providers.find((p) => p.name === "kimi")).toMatchObject({
      baseUrl: "http://127.0.0.1:9/v1",
      baseUrlSource: "settings",
    });
    const removed = await call(url, "/api/settings/providers/deepseek", { session: owner, method: "DELETE" });
    expect(
      ((await removed.json()) as { providers: Array<{ name: string; keySource: string }> }).providers.find(
        (p) => p.name === "deepseek",
      )?.keySource,
    ).toBe("none");
    expect(
      (
        await call(url, "/api/settings/providers/deepseek", {
          session: users.member!,
          method: "PUT",
          body: {},
        })
      ).status,
    ).toBe(403);
  });

  it("says whether the default model can run, to every signed-in user, with the fix", async () => {
    const { url } = await startServer();
    const { owner, users } = await withUsers(url, ["member"]);
    const status = async () =>
      (await (await call(url, "/api/models/status", { session: users.member! })).json()) as {
        ready: boolean;
        problem: string | null;
        message: string | null;
      };
    expect(await status()).toMatchObject({ ready: false, problem: "no_default_model" });
    expect((await status()).message).toContain("Settings → Providers");
    await call(url, "/api/settings", {
      session: owner,
      method: "PUT",
      body: { defaultModel: "anthropic:claude-x" },
    });
    expect(await status()).toMatchObject({ ready: false, problem: "no_key" });
    await call(url, "/api/settings/providers/anthropic", {
      session: owner,
      method: "PUT",
      body: { apiKey: "sk-ant-0123456789" },
    });
    expect(await status()).toMatchObject({ ready: true, problem: null, message: null });
    expect((await call(url, "/api/models/status")).status).toBe(401);
  });
});

describe("API tokens", () => {
  it("shows a token once, stores it hashed, authenticates it, and deletes it", async () => {
    const { url, server, db } = await startServer();
    const { owner, users } = await withUsers(url, ["member"]);
    const res = await call(url, "/api/tokens", { session: users.member!, body: { name: "my script" } });
    expect(res.status).toBe(201);
    const created = (await res.json()) as { id: string; token: string; name: string };
    expect(created.token).toMatch(/^dsk_[A-Za-z0-9_-]{43}$/);

    const list = (await (await call(url, "/api/tokens", { session: users.member! })).json()) as Array<
      Record<string, unknown>
    >;
    expect(list).toHaveLength(1);
    expect(JSON.stringify(list)).not.toContain(created.token);
    expect(list[0]).toMatchObject({
      id: created.id,
      name: "my script",
      preview: `dsk_…${created.token.slice(-4)}`,
      lastUsedAt: null,
    });
    const stored = db.prepare("SELECT token_hash FROM api_tokens").get() as { token_hash: string };
    expect(stored.token_hash).toMatch(/^[0-9a-f]{64}$/);

    expect(await server.authenticateApiToken(`Bearer ${created.token}`)).toEqual({
      userId: users.member!.userId,
      role: "member",
    });
    expect(await server.authenticateApiToken(created.token)).toBeDefined();
    expect(await server.authenticateApiToken(`Bearer dsk_${"x".repeat(43)}`)).toBeUndefined();
    const after = (await (await call(url, "/api/tokens", { session: users.member! })).json()) as Array<{
      lastUsedAt: number;
    }>;
    expect(after[0]?.lastUsedAt).toBeGreaterThan(0);

    // Tokens are private: others neither see nor delete them, and they are no session credentials.
    expect(await (await call(url, "/api/tokens", { session: owner })).json()).toEqual([]);
    expect((await call(url, `/api/tokens/${created.id}`, { session: owner, method: "DELETE" })).status).toBe(
      404,
    );
    expect(
      (await call(url, "/api/auth/me", { headers: { authorization: `Bearer ${created.token}` } })).status,
    ).toBe(401);

    expect(
      (await call(url, `/api/tokens/${created.id}`, { session: users.member!, method: "DELETE" })).status,
    ).toBe(204);
    expect(await server.authenticateApiToken(`Bearer ${created.token}`)).toBeUndefined();
  });
});

describe("the extension point for team routes", () => {
  it("mounts extra routes behind the guards, with API-token auth and the message rate limit", async () => {
    const { apiTokenAuth } = await import("../../src/server/auth/middleware.js");
    const { actorOf } = await import("../../src/server/context.js");
    const { messageRateLimit } = await import("../../src/server/security/rate-limit.js");
    const { jsonBody } = await import("../../src/server/http/validate.js");
    const { z } = await import("zod");
    const { url } = await startServer({
      rateLimits: { messagePerUser: { capacity: 2, perMinute: 2 } },
      routes: [
        (app) => {
          app.get("/v1/whoami", apiTokenAuth, (c) => c.json(actorOf(c)));
          app.post(
            "/api/test/messages",
            messageRateLimit,
            jsonBody(z.object({ text: z.string().max(10) })),
            (c) => c.json({ echo: c.req.valid("json").text, actor: actorOf(c) }, 201),
          );
        },
      ],
    });
    const { owner } = await withUsers(url);
    const token = (
      (await (await call(url, "/api/tokens", { session: owner, body: { name: "t" } })).json()) as {
        token: string;
      }
    ).token;
    const who = await call(url, "/v1/whoami", { headers: { authorization: `Bearer ${token}` } });
    expect(await who.json()).toEqual({ userId: owner.userId, role: "owner" });
    expect((await call(url, "/v1/whoami", { session: owner, as: "bearer" })).status).toBe(401);

    expect((await call(url, "/api/test/messages", { body: { text: "hi" } })).status).toBe(401);
    expect(
      (await call(url, "/api/test/messages", { session: owner, body: { text: "hi" }, noCsrf: true })).status,
    ).toBe(403);
    const invalid = await call(url, "/api/test/messages", {
      session: owner,
      body: { text: "far too long text" },
    });
    expect(invalid.status).toBe(400);
    expect(
      ((await invalid.json()) as { error: { issues: Array<{ path: string }> } }).error.issues[0]?.path,
    ).toBe("text");
    expect((await call(url, "/api/test/messages", { session: owner, body: { text: "hi" } })).status).toBe(
      201,
    );
    const limited = await call(url, "/api/test/messages", { session: owner, body: { text: "hi" } });
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(30);
  });
});

describe("custom providers of the config file", () => {
  it("are listed, marked as from the config file; the settings override only their base URL and key", async () => {
    const dir = mkdtempSync(join(tmpdir(), "dimsum-config-"));
    const configPath = join(dir, "dimsum.config.json");
    writeFileSync(
      configPath,
      JSON.stringify({
        providers: {
          corp: { baseUrl: "http://127.0.0.1:9/corp/v1", apiKeyEnv: "CORP_LLM_KEY" },
          local: { baseUrl: "http://127.0.0.1:9/local/v1", apiKey: "fixed-local-key-0123456789" },
          bare: { baseUrl: "http://127.0.0.1:9/bare/v1", protocol: "anthropic", apiKeyEnv: "BARE_KEY" },
        },
      }),
    );
    const { url } = await startServer({
      env: { DIMSUM_CONFIG: configPath, CORP_LLM_KEY: "sk-corp-0123456789abcdef" },
    });
    const { owner, users } = await withUsers(url, ["member"]);
    type Row = {
      name: string;
      builtin: boolean;
      fromConfigFile: boolean;
      protocol: string;
      baseUrl: string;
      baseUrlSource: string;
      defaultBaseUrl: string | null;
      keyEnv: string | null;
      hasKey: boolean;
      keySource: string;
      keyPreview: string | null;
    };
    type View = { providers: Row[]; modelStatus: { ready: boolean; problem: string | null } };
    const res = await call(url, "/api/settings", { session: owner });
    const text = await res.text();
    expect(text).not.toContain("0123456789abcdef");
    expect(text).not.toContain("fixed-local-key");
    const view = JSON.parse(text) as View;
    const row = (v: View, name: string) => v.providers.find((p) => p.name === name);
    expect(view.providers.filter((p) => p.fromConfigFile).map((p) => p.name)).toEqual([
      "corp",
      "local",
      "bare",
    ]);
    expect(view.providers.filter((p) => p.builtin)).toHaveLength(12);
    expect(row(view, "corp")).toMatchObject({
      builtin: false,
      protocol: "openai",
      baseUrl: "http://127.0.0.1:9/corp/v1",
      baseUrlSource: "config",
      defaultBaseUrl: "http://127.0.0.1:9/corp/v1",
      keyEnv: "CORP_LLM_KEY",
      hasKey: true,
      keySource: "environment",
      keyPreview: null,
    });
    expect(row(view, "local")).toMatchObject({ hasKey: true, keySource: "config", keyPreview: null });
    expect(row(view, "bare")).toMatchObject({ protocol: "anthropic", hasKey: false, keySource: "none" });

    // The default model on a config-file provider with no key yet: not ready.
    await call(url, "/api/settings", { session: owner, method: "PUT", body: { defaultModel: "bare:m1" } });
    const notReady = (await (await call(url, "/api/settings", { session: owner })).json()) as View;
    expect(notReady.modelStatus).toMatchObject({ ready: false, problem: "no_key" });

    // A key saved in the settings needs no base URL and cannot change the file's protocol.
    const keyed = await call(url, "/api/settings/providers/bare", {
      session: owner,
      method: "PUT",
      body: { apiKey: "sk-bare-0123456789", protocol: "openai" },
    });
    expect(keyed.status).toBe(200);
    const afterKey = (await keyed.json()) as View;
    expect(row(afterKey, "bare")).toMatchObject({
      fromConfigFile: true,
      protocol: "anthropic",
      baseUrl: "http://127.0.0.1:9/bare/v1",
      baseUrlSource: "config",
      keySource: "settings",
      keyPreview: "sk-…6789",
    });
    expect(afterKey.modelStatus).toMatchObject({ ready: true, problem: null });
    // Listed once, not again as a provider saved in the UI.
    expect(afterKey.providers.filter((p) => p.name === "bare")).toHaveLength(1);

    // The base URL can be overridden, and the override removed again.
    const moved = (await (
      await call(url, "/api/settings/providers/corp", {
        session: owner,
        method: "PUT",
        body: { baseUrl: "http://127.0.0.1:9/elsewhere/v1" },
      })
    ).json()) as View;
    expect(row(moved, "corp")).toMatchObject({
      baseUrl: "http://127.0.0.1:9/elsewhere/v1",
      baseUrlSource: "settings",
      defaultBaseUrl: "http://127.0.0.1:9/corp/v1",
      keySource: "environment",
    });
    const reset = (await (
      await call(url, "/api/settings/providers/corp", { session: owner, method: "DELETE" })
    ).json()) as View;
    expect(row(reset, "corp")).toMatchObject({
      baseUrl: "http://127.0.0.1:9/corp/v1",
      baseUrlSource: "config",
    });
    expect(row(reset, "corp")?.fromConfigFile).toBe(true);

    expect((await call(url, "/api/settings", { session: users.member! })).status).toBe(403);
  });
});
