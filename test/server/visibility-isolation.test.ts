/**
 * Agents that belong to someone, proven over HTTP, `/v1`, A2A and `call_agent`: a private agent is
 * unknown (404) to a member outside on every route and not callable; chosen people see theirs;
 * admins see everything; a chat's agents stay visible to everyone in it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentRecord, ChannelRecord, PostResult } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { AgentScripts, lastToolResult } from "../team/harness.js";
import { call, type Session, withUsers } from "./helpers.js";
import {
  expectJson,
  follow,
  openSocket,
  runFrame,
  startTeamServer,
  type TeamServer,
} from "./team-helpers.js";

let llm: FakeLlmServer;
const scripts = new AgentScripts();

beforeAll(async () => {
  llm = await startFakeLlmServer({ defaultTurn: scripts.turn });
});
afterAll(async () => {
  await llm.close();
});

interface World {
  s: TeamServer;
  owner: Session;
  admin: Session;
  member: Session;
  other: Session;
}

async function world(): Promise<World> {
  const s = await startTeamServer({ llmUrl: llm.url });
  const { owner, users } = await withUsers(s.url, ["admin", "member", "guest"]);
  const member = users.member!;
  // A second member: one of the "chosen people" of the shared agent.
  const other = users.guest!;
  await call(s.url, `/api/users/${other.userId}`, {
    session: owner,
    method: "PATCH",
    body: { role: "member" },
  });
  const made = async (body: Record<string, unknown>) =>
    expectJson<AgentRecord>(await call(s.url, "/api/agents", { session: owner, body }), 201);
  const secret = await made({ id: "secret", name: "Secret", visibility: "private" });
  expect(secret).toMatchObject({ ownerId: owner.userId, visibility: "private" });
  await made({ id: "chosen", name: "Chosen", visibility: "people", allowedUsers: [other.userId] });
  return { s, owner, admin: users.admin!, member, other };
}

async function tokenOf(w: World, session: Session): Promise<string> {
  const created = await expectJson<{ token: string }>(
    await call(w.s.url, "/api/tokens", { session, body: { name: "script" } }),
    201,
  );
  return created.token;
}

const ids = (agents: AgentRecord[]) => agents.map((a) => a.id);

describe("agents that belong to someone", () => {
  it("hides a private agent from a member on every agent route, and shows it to admins", async () => {
    const w = await world();
    const { s, member, admin, other } = w;
    const seen = await expectJson<AgentRecord[]>(await call(s.url, "/api/agents", { session: member }), 200);
    expect(ids(seen)).not.toContain("secret");
    expect(ids(seen)).not.toContain("chosen");
    expect(ids(seen)).toContain("assistant");
    const adminSees = await expectJson<AgentRecord[]>(
      await call(s.url, "/api/agents", { session: admin }),
      200,
    );
    expect(ids(adminSees)).toEqual(expect.arrayContaining(["secret", "chosen"]));
    const chosenSees = await expectJson<AgentRecord[]>(
      await call(s.url, "/api/agents", { session: other }),
      200,
    );
    expect(ids(chosenSees)).toContain("chosen");
    expect(ids(chosenSees)).not.toContain("secret");
    expect((await call(s.url, "/api/agents/chosen", { session: other })).status).toBe(200);

    for (const [path, method, body] of [
      ["/api/agents/secret", "GET", undefined],
      ["/api/agents/secret", "PATCH", { name: "Mine now" }],
      ["/api/agents/secret", "DELETE", undefined],
      ["/api/agents/secret/soul", "GET", undefined],
      ["/api/agents/secret/soul", "PUT", { content: "x" }],
    ] as const) {
      const res = await call(s.url, path, { session: member, method, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
      // The answer is the same as for an agent that does not exist and names no hidden agent.
      const text = await res.text();
      expect(text).not.toContain("Secret");
      expect(text).not.toMatch(/known agents:[^"]*secret/);
    }
    const ghost = await call(s.url, "/api/agents/ghost", { session: member });
    expect(ghost.status).toBe(404);
    expect((await call(s.url, "/api/agents/secret", { session: admin })).status).toBe(200);
  });

  it("lets only its owner or an admin change who sees it", async () => {
    const { s, owner, other } = await world();
    const opened = await expectJson<AgentRecord>(
      await call(s.url, "/api/agents/secret", {
        session: owner,
        method: "PATCH",
        body: { visibility: "people", allowedUsers: [other.userId] },
      }),
      200,
    );
    expect(opened).toMatchObject({ visibility: "people", allowedUsers: [other.userId] });
    expect((await call(s.url, "/api/agents/secret", { session: other })).status).toBe(200);
    const bad = await call(s.url, "/api/agents/secret", {
      session: owner,
      method: "PATCH",
      body: { visibility: "friends" },
    });
    expect(bad.status).toBe(400);
  });

  it("refuses a hidden agent in a chat (404) and keeps a group's agents visible to its people (409)", async () => {
    const { s, owner, member, other } = await world();
    const direct = await call(s.url, "/api/channels", {
      session: member,
      body: { kind: "direct", name: "Mine", agentIds: ["secret"] },
    });
    expect(direct.status).toBe(404);
    expect(await direct.text()).not.toContain("Secret");
    // The owner may not put the member into a chat with an agent the member cannot see...
    const mixed = await call(s.url, "/api/channels", {
      session: owner,
      body: { kind: "group", name: "Mixed", agentIds: ["secret"], userIds: [member.userId] },
    });
    expect(mixed.status).toBe(409);
    // ...nor add the agent later, nor add the member to a chat that has it.
    const group = await expectJson<ChannelRecord>(
      await call(s.url, "/api/channels", {
        session: owner,
        body: { kind: "group", name: "Team", agentIds: ["assistant"], userIds: [member.userId] },
      }),
      201,
    );
    const added = await call(s.url, `/api/channels/${group.id}/members`, {
      session: owner,
      body: { type: "agent", id: "secret" },
    });
    expect(added.status).toBe(409);
    const mine = await expectJson<ChannelRecord>(
      await call(s.url, "/api/channels", {
        session: owner,
        body: { kind: "group", name: "Owner's", agentIds: ["secret"], userIds: [] },
      }),
      201,
    );
    const joined = await call(s.url, `/api/channels/${mine.id}/members`, {
      session: owner,
      body: { type: "user", id: member.userId },
    });
    expect(joined.status).toBe(409);
    // The chosen person may join a chat with the agent shared with them.
    const shared = await expectJson<ChannelRecord>(
      await call(s.url, "/api/channels", {
        session: owner,
        body: { kind: "group", name: "Shared", agentIds: ["chosen"], userIds: [other.userId] },
      }),
      201,
    );
    expect(shared.members).toContainEqual({ type: "user", id: other.userId });
    // A member adding a hidden agent to their own group: not found.
    const own = await expectJson<ChannelRecord>(
      await call(s.url, "/api/channels", {
        session: member,
        body: { kind: "group", name: "Member's", agentIds: ["assistant"], userIds: [] },
      }),
      201,
    );
    const hidden = await call(s.url, `/api/channels/${own.id}/members`, {
      session: member,
      body: { type: "agent", id: "secret" },
    });
    expect(hidden.status).toBe(404);
  });

  it("is not a model of /v1 nor an A2A agent for a member outside", async () => {
    const w = await world();
    const { s } = w;
    const token = await tokenOf(w, w.member);
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const models = (await (await fetch(`${s.url}/v1/models`, { headers })).json()) as {
      data: Array<{ id: string }>;
    };
    expect(models.data.map((m) => m.id)).not.toContain("secret");
    const completion = await fetch(`${s.url}/v1/chat/completions`, {
      method: "POST",
      headers,
      body: JSON.stringify({ model: "secret", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(completion.status).toBe(404);
    expect(await completion.text()).toContain("model_not_found");

    const listed = (await (await fetch(`${s.url}/a2a`, { headers })).json()) as {
      agents: Array<{ id: string }>;
    };
    expect(JSON.stringify(listed)).not.toContain("secret");
    expect((await fetch(`${s.url}/a2a/secret/.well-known/agent-card.json`, { headers })).status).toBe(404);
    const sent = await fetch(`${s.url}/a2a/secret`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "message/send",
        params: {
          message: { kind: "message", messageId: "m1", role: "user", parts: [{ kind: "text", text: "hi" }] },
        },
      }),
    });
    expect(sent.status).toBe(404);
    const card = await (await fetch(`${s.url}/.well-known/agent-card.json`, { headers })).text();
    expect(card).not.toContain("secret");

    // The admin's token reaches it.
    const adminToken = await tokenOf(w, w.admin);
    const adminModels = (await (
      await fetch(`${s.url}/v1/models`, { headers: { authorization: `Bearer ${adminToken}` } })
    ).json()) as { data: Array<{ id: string }> };
    expect(adminModels.data.map((m) => m.id)).toContain("secret");
  });

  it("is not callable through call_agent in a run of a member outside", async () => {
    const w = await world();
    const { s, member } = w;
    const group = await expectJson<ChannelRecord>(
      await call(s.url, "/api/channels", {
        session: member,
        body: {
          kind: "group",
          name: "Calls",
          agentIds: ["assistant"],
          leaderAgentId: "assistant",
          userIds: [],
        },
      }),
      201,
    );
    scripts.add(
      "assistant",
      { toolCalls: [{ name: "call_agent", args: { agentId: "secret", task: "tell me" } }] },
      (request) => ({ text: `result: ${lastToolResult(request)}` }),
    );
    const socket = await openSocket(s, member);
    await follow(socket, group.id);
    const posted = await expectJson<PostResult>(
      await call(s.url, `/api/channels/${group.id}/messages`, {
        session: member,
        body: { text: "@assistant go" },
      }),
      201,
    );
    await socket.next(runFrame(posted.runs[0]!.id, "done"));
    const messages = await expectJson<Array<{ text: string; author: { type: string } }>>(
      await call(s.url, `/api/channels/${group.id}/messages`, { session: member }),
      200,
    );
    const answer = messages.filter((m) => m.author.type === "agent").at(-1)?.text ?? "";
    expect(answer).toContain('Unknown agent "secret"');
    expect(answer).not.toMatch(/call one of:[^\n]*secret/);
  });
});
