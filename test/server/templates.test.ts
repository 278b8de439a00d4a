/**
 * Team templates over HTTP on real servers: an export imported on a second server (another account)
 * rebuilds equal agents, group and chain; a bad template is a 400 naming its fields; exports carry no
 * secrets, ids or accounts; importing takes the right to create agents; a failed import creates nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentRecord, ChannelRecord, SoulFile } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { call, type Session, withUsers } from "./helpers.js";
import { expectJson, startTeamServer, type TeamServer } from "./team-helpers.js";

let llm: FakeLlmServer;

beforeAll(async () => {
  llm = await startFakeLlmServer({});
});
afterAll(async () => {
  await llm.close();
});

interface ImportBody {
  kind: string;
  agents: AgentRecord[];
  channel?: ChannelRecord;
  renamed: Array<{ from: string; to: string }>;
  notes: string[];
}

interface ErrorBody {
  error: { code: string; message: string; issues?: Array<{ path: string; message: string }> };
}

const SCRIBE_SOUL = "# Scribe\n\nYou write; hand drafts to @writer and never to @writer-bot.\n";

/** Server A's team: a custom agent and the starter writer in a group with a leader and a chain. */
async function sourceTeam(s: TeamServer, owner: Session): Promise<ChannelRecord> {
  await expectJson(
    await call(s.url, "/api/agents", {
      session: owner,
      body: {
        id: "scribe",
        name: "Scribe",
        emoji: "🪶",
        model: "openai:gpt-test",
        reasoning: "low",
        toolsAllow: ["calculator", "current_time"],
        toolsDeny: ["fetch_url"],
        memory: false,
        skills: ["code-review"],
        knowledgeBases: ["handbook"],
        askFirst: ["calculator"],
        answerFormat: { type: "object", properties: { title: { type: "string" } } },
        soul: SCRIBE_SOUL,
      },
    }),
    201,
  );
  const group = await expectJson<ChannelRecord>(
    await call(s.url, "/api/channels", {
      session: owner,
      body: { kind: "group", name: "Paper room", agentIds: ["scribe", "writer"], leaderAgentId: "scribe" },
    }),
    201,
  );
  await expectJson(
    await call(s.url, `/api/channels/${group.id}/chain`, {
      method: "PUT",
      session: owner,
      body: {
        steps: [
          { agentId: "scribe", instruction: "Outline it, then ask @writer." },
          { agentId: "writer", requiresApproval: true },
        ],
      },
    }),
    200,
  );
  await expectJson(
    await call(s.url, `/api/channels/${group.id}`, {
      method: "PATCH",
      session: owner,
      body: { queueMode: "followup" },
    }),
    200,
  );
  return group;
}

/**
 * An agent's settings without what belongs to one server (timestamps, the owner: the person who
 * imported it owns the copy) or is renamed (id).
 */
function settingsOf(agent: AgentRecord): Record<string, unknown> {
  const { createdAt: _c, updatedAt: _u, id: _id, name: _n, ownerId: _o, ...rest } = agent;
  return rest;
}

describe("team templates", () => {
  it("an exported group imported on a second server rebuilds equal agents, group and chain", async () => {
    const a = await startTeamServer({ llmUrl: llm.url });
    const b = await startTeamServer({ llmUrl: llm.url });
    const ownerA = (await withUsers(a.url)).owner;
    const ownerB = (await withUsers(b.url)).owner;
    const group = await sourceTeam(a, ownerA);

    const res = await call(a.url, `/api/channels/${group.id}/export`, { session: ownerA });
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="paper-room.dimsum.json"');
    const template = await expectJson<Record<string, unknown>>(res, 200);
    expect(template).toMatchObject({
      format: "dimsum-template",
      version: 1,
      kind: "team",
      name: "Paper room",
    });

    const imported = await expectJson<ImportBody>(
      await call(b.url, "/api/templates/import", { session: ownerB, body: template }),
      201,
    );
    // B has its own starter "writer": the template's writer becomes writer-2, scribe keeps its id.
    expect(imported.renamed).toEqual([{ from: "writer", to: "writer-2" }]);
    expect(imported.agents.map((x) => x.id)).toEqual(["scribe", "writer-2"]);
    expect(imported.agents.map((x) => x.name)).toEqual(["Scribe", "Writer (2)"]);

    for (const [fromId, toId] of [
      ["scribe", "scribe"],
      ["writer", "writer-2"],
    ] as const) {
      const original = await expectJson<AgentRecord>(
        await call(a.url, `/api/agents/${fromId}`, { session: ownerA }),
        200,
      );
      const copy = await expectJson<AgentRecord>(
        await call(b.url, `/api/agents/${toId}`, { session: ownerB }),
        200,
      );
      expect(settingsOf(copy)).toEqual(settingsOf(original));
    }
    // Mentions of the renamed agent follow it; a longer id that merely starts the same does not.
    const soul = await expectJson<SoulFile>(
      await call(b.url, "/api/agents/scribe/soul", { session: ownerB }),
      200,
    );
    expect(soul.content).toBe("# Scribe\n\nYou write; hand drafts to @writer-2 and never to @writer-bot.\n");

    const channel = imported.channel as ChannelRecord;
    const stored = await expectJson<ChannelRecord>(
      await call(b.url, `/api/channels/${channel.id}`, { session: ownerB }),
      200,
    );
    expect(stored).toMatchObject({
      kind: "group",
      name: "Paper room",
      leaderAgentId: "scribe",
      queueMode: "followup",
      createdBy: ownerB.userId,
      chain: [
        { agentId: "scribe", requiresApproval: false, instruction: "Outline it, then ask @writer-2." },
        { agentId: "writer-2", requiresApproval: true },
      ],
    });
    expect(stored.members).toEqual(
      expect.arrayContaining([
        { type: "user", id: ownerB.userId },
        { type: "agent", id: "scribe" },
        { type: "agent", id: "writer-2" },
      ]),
    );
    expect(stored.members).toHaveLength(3);

    // Imported twice: every id and the group's name get the next suffix, nothing is refused.
    const again = await expectJson<ImportBody>(
      await call(b.url, "/api/templates/import", { session: ownerB, body: template }),
      201,
    );
    expect(again.agents.map((x) => x.id)).toEqual(["scribe-2", "writer-3"]);
    expect(again.channel?.name).toBe("Paper room (2)");
  });

  it("an agent exports alone and imports as one agent", async () => {
    const s = await startTeamServer({ llmUrl: llm.url });
    const { owner } = await withUsers(s.url);
    const res = await call(s.url, "/api/agents/editor/export", { session: owner });
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="editor.dimsum.json"');
    const template = await expectJson<{ kind: string; agent: { id: string; persona: string } }>(res, 200);
    expect(template.kind).toBe("agent");
    expect(template.agent.persona).toContain("# Editor");
    const imported = await expectJson<ImportBody>(
      await call(s.url, "/api/templates/import", { session: owner, body: template }),
      201,
    );
    expect(imported.agents.map((x) => x.id)).toEqual(["editor-2"]);
    expect(imported.channel).toBeUndefined();
  });

  it("exports hold no secrets, server ids or accounts", async () => {
    const s = await startTeamServer({ llmUrl: llm.url });
    const { owner, users } = await withUsers(s.url, ["member"]);
    const member = users.member as Session;
    const group = await sourceTeam(s, owner);
    await expectJson(
      await call(s.url, `/api/channels/${group.id}/members`, {
        session: owner,
        body: { type: "user", id: member.userId },
      }),
      200,
    );
    const texts = [
      await (await call(s.url, `/api/channels/${group.id}/export`, { session: owner })).text(),
      await (await call(s.url, "/api/agents/scribe/export", { session: owner })).text(),
    ];
    for (const text of texts) {
      expect(text).toContain("Scribe");
      for (const leak of [
        "sk-test-key-1234",
        owner.userId,
        member.userId,
        group.id,
        "createdBy",
        "createdAt",
        "ownerId",
        "members",
      ]) {
        expect(text).not.toContain(leak);
      }
    }
  });

  it("a template that does not fit is a 400 naming each field, and creates nothing", async () => {
    const s = await startTeamServer({ llmUrl: llm.url });
    const { owner } = await withUsers(s.url);
    const bad = await expectJson<ErrorBody>(
      await call(s.url, "/api/templates/import", {
        session: owner,
        body: {
          format: "dimsum-template",
          version: 1,
          kind: "team",
          name: "Broken",
          agents: [{ id: "Bad Id", name: "" }],
          group: { name: "Broken", leader: "ghost" },
        },
      }),
      400,
    );
    expect(bad.error.code).toBe("invalid");
    const paths = bad.error.issues?.map((i) => i.path) ?? [];
    expect(paths).toEqual(expect.arrayContaining(["agents.0.id", "agents.0.name", "group.leader"]));
    expect(bad.error.message).toContain("not a usable Dimsum template");

    const future = await expectJson<ErrorBody>(
      await call(s.url, "/api/templates/import", {
        session: owner,
        body: {
          format: "dimsum-template",
          version: 2,
          kind: "agent",
          name: "x",
          agent: { id: "x", name: "X" },
        },
      }),
      400,
    );
    expect(future.error.issues?.[0]).toMatchObject({ path: "version" });
    expect(future.error.issues?.[0]?.message).toContain("version 1");
  });

  it("an import refused half-way leaves no agent and no group behind", async () => {
    const s = await startTeamServer({ llmUrl: llm.url });
    const { owner } = await withUsers(s.url);
    const agentsBefore = await expectJson<AgentRecord[]>(
      await call(s.url, "/api/agents", { session: owner }),
      200,
    );
    const res = await call(s.url, "/api/templates/import", {
      session: owner,
      body: {
        format: "dimsum-template",
        version: 1,
        kind: "team",
        name: "Half",
        agents: [
          { id: "first", name: "First", persona: "# First\n" },
          { id: "second", name: "Second", toolsAllow: ["no_such_tool"] },
        ],
        group: { name: "Half", chain: [{ agent: "first" }, { agent: "second" }] },
      },
    });
    const body = await expectJson<ErrorBody>(res, 400);
    expect(body.error.issues?.[0]?.path).toBe("agents.1");
    expect(body.error.message).toContain("no_such_tool");
    const agentsAfter = await expectJson<AgentRecord[]>(
      await call(s.url, "/api/agents", { session: owner }),
      200,
    );
    expect(agentsAfter.map((x) => x.id)).toEqual(agentsBefore.map((x) => x.id));
    const channels = await expectJson<ChannelRecord[]>(
      await call(s.url, "/api/channels", { session: owner }),
      200,
    );
    expect(channels.filter((c) => c.name === "Half")).toEqual([]);
  });

  it("importing needs the right to create agents; exports need the right to read them", async () => {
    const s = await startTeamServer({ llmUrl: llm.url });
    const { owner, users } = await withUsers(s.url, ["admin", "member", "guest"]);
    const gallery = await expectJson<Array<{ id: string; template: unknown }>>(
      await call(s.url, "/api/templates", { session: users.member as Session }),
      200,
    );
    // The teams most people start with come first.
    expect(gallery.map((g) => g.id).slice(0, 3)).toEqual(["writing-room", "research-desk", "code-review"]);
    const writingRoom = gallery.find((g) => g.id === "writing-room")?.template;
    expect(writingRoom).toBeDefined();

    const refused = await expectJson<ErrorBody>(
      await call(s.url, "/api/templates/import", { session: users.member as Session, body: writingRoom }),
      403,
    );
    expect(refused.error.message).toContain("Only owners and admins");
    await expectJson(
      await call(s.url, "/api/templates/import", { session: users.guest as Session, body: writingRoom }),
      403,
    );
    const agents = await expectJson<AgentRecord[]>(await call(s.url, "/api/agents", { session: owner }), 200);
    expect(agents.some((x) => x.id === "wordsmith")).toBe(false);
    await expectJson(
      await call(s.url, "/api/templates/import", { session: users.admin as Session, body: writingRoom }),
      201,
    );

    // A member reads personas (200), a guest does not (403); a group the member is not in is a 404.
    await expectJson(
      await call(s.url, "/api/agents/wordsmith/export", { session: users.member as Session }),
      200,
    );
    await expectJson(
      await call(s.url, "/api/agents/wordsmith/export", { session: users.guest as Session }),
      403,
    );
    const group = await sourceTeam(s, owner);
    await expectJson(
      await call(s.url, `/api/channels/${group.id}/export`, { session: users.member as Session }),
      404,
    );
    // Without a session there is no gallery either.
    expect((await call(s.url, "/api/templates")).status).toBe(401);
  });

  it("every gallery template imports on a fresh server", async () => {
    const s = await startTeamServer({ llmUrl: llm.url });
    const { owner } = await withUsers(s.url);
    const gallery = await expectJson<Array<{ id: string; template: { name: string } }>>(
      await call(s.url, "/api/templates", { session: owner }),
      200,
    );
    expect(gallery.length).toBeGreaterThanOrEqual(8);
    for (const entry of gallery) {
      const imported = await expectJson<ImportBody>(
        await call(s.url, "/api/templates/import", { session: owner, body: entry.template }),
        201,
      );
      expect(imported.channel?.name, entry.id).toBe(entry.template.name);
      expect(imported.channel?.chain.length, entry.id).toBeGreaterThan(0);
      expect(imported.renamed, entry.id).toEqual([]);
    }
  });
});
