/**
 * The person's language on a real server: a server set up in Chinese keeps the owner's language and
 * gives the starter agents in Chinese; `PUT /api/auth/locale` is kept with the person (a new login
 * sees it) and refuses languages the UI does not speak; the gallery in Chinese imports and keeps
 * every chain. A server set up without a language keeps the English starters.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentRecord, ChannelRecord, SoulFile } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { call, login, type Session, sessionCookieFrom } from "./helpers.js";
import { expectJson, startTeamServer } from "./team-helpers.js";

let llm: FakeLlmServer;

beforeAll(async () => {
  llm = await startFakeLlmServer({});
});
afterAll(async () => {
  await llm.close();
});

async function setUp(url: string, locale?: string): Promise<Session> {
  const res = await call(url, "/api/auth/setup", {
    body: { username: "alice", password: "owner-password-1", ...(locale ? { locale } : {}) },
  });
  expect(res.status).toBe(201);
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

async function localeOf(url: string, session: Session): Promise<string | null> {
  const me = await expectJson<{ user: { locale: string | null } }>(
    await call(url, "/api/auth/me", { session }),
    200,
  );
  return me.user.locale;
}

describe("the person's language", () => {
  it("a server set up in Chinese gives its owner the starter agents in Chinese", async () => {
    const s = await startTeamServer({ llmUrl: llm.url });
    const owner = await setUp(s.url, "zh-CN");
    expect(await localeOf(s.url, owner)).toBe("zh-CN");
    const agents = await expectJson<AgentRecord[]>(await call(s.url, "/api/agents", { session: owner }), 200);
    const names = Object.fromEntries(agents.map((a) => [a.id, a.name]));
    expect(names).toMatchObject({
      assistant: "助手",
      coder: "程序员",
      writer: "写手",
      editor: "编辑",
      translator: "翻译",
    });
    const soul = await expectJson<SoulFile>(
      await call(s.url, "/api/agents/assistant/soul", { session: owner }),
      200,
    );
    expect(soul.content).toContain("# 助手");
    expect(soul.content).toContain("call_agent");
  });

  it("a server set up without a language keeps the English starters", async () => {
    const s = await startTeamServer({ llmUrl: llm.url });
    const owner = await setUp(s.url);
    expect(await localeOf(s.url, owner)).toBeNull();
    const agents = await expectJson<AgentRecord[]>(await call(s.url, "/api/agents", { session: owner }), 200);
    expect(agents.find((a) => a.id === "assistant")?.name).toBe("Assistant");
  });

  it("an owner created at start (as `dimsum serve` does) who chooses Chinese gets the starters in Chinese", async () => {
    const s = await startTeamServer({ llmUrl: llm.url });
    const owner = await setUp(s.url);
    const put = await call(s.url, "/api/auth/locale", {
      session: owner,
      method: "PUT",
      body: { locale: "zh-CN" },
    });
    expect(put.status).toBe(204);
    const agents = await expectJson<AgentRecord[]>(await call(s.url, "/api/agents", { session: owner }), 200);
    expect(agents.find((a) => a.id === "translator")?.name).toBe("翻译");
  });

  it("keeps a switch with the person, seen by a new login, and refuses unknown languages", async () => {
    const s = await startTeamServer({ llmUrl: llm.url });
    const owner = await setUp(s.url);
    const put = await call(s.url, "/api/auth/locale", {
      session: owner,
      method: "PUT",
      body: { locale: "zh-CN" },
    });
    expect(put.status).toBe(204);
    const elsewhere = await login(s.url, "alice", "owner-password-1");
    expect(await localeOf(s.url, elsewhere)).toBe("zh-CN");
    const bad = await call(s.url, "/api/auth/locale", {
      session: owner,
      method: "PUT",
      body: { locale: "fr" },
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe("invalid");
    // Without the CSRF token the change is refused.
    const forged = await call(s.url, "/api/auth/locale", {
      session: owner,
      method: "PUT",
      noCsrf: true,
      body: { locale: "en" },
    });
    expect(forged.status).toBe(403);
    expect(await localeOf(s.url, elsewhere)).toBe("zh-CN");
  });

  it("the Chinese gallery has every team in Chinese, and each imports with its chain", async () => {
    const s = await startTeamServer({ llmUrl: llm.url });
    const owner = await setUp(s.url, "zh-CN");
    type Entry = { id: string; template: { name: string; agents: Array<{ id: string; name: string }> } };
    const english = await expectJson<Entry[]>(await call(s.url, "/api/templates", { session: owner }), 200);
    const chinese = await expectJson<Entry[]>(
      await call(s.url, "/api/templates?locale=zh-CN", { session: owner }),
      200,
    );
    expect(chinese.map((e) => e.id)).toEqual(english.map((e) => e.id));
    for (const [index, entry] of chinese.entries()) {
      expect(entry.template.name, entry.id).toMatch(/[\u4e00-\u9fff]/);
      // The same agents (ids) as the English team, so @mentions and chains keep working.
      expect(entry.template.agents.map((a) => a.id)).toEqual(
        english[index]?.template.agents.map((a) => a.id),
      );
      const imported = await expectJson<{ channel?: ChannelRecord; renamed: unknown[] }>(
        await call(s.url, "/api/templates/import", { session: owner, body: entry.template }),
        201,
      );
      expect(imported.channel?.name, entry.id).toBe(entry.template.name);
      expect(imported.channel?.chain.length, entry.id).toBeGreaterThan(0);
    }
  });
});
