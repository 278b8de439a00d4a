/** The team repositories hold the same contract on SQLite and on PostgreSQL. */
import { dirname } from "node:path";
import { expect, it } from "vitest";
import { PersonaFiles, type PersonaStore } from "../../src/team/personas.js";
import { PgPersonaStore } from "../../src/team/store/postgres/persona-store.js";
import { createPostgresTeamStore, createSqliteTeamStore, type TeamStore } from "../../src/team/team-store.js";
import type { AgentRecord, ChannelRecord, FlowRecord } from "../../src/team/types.js";
import { type Backend, describeBackends, rawSql } from "./backends.js";

function storeOf(backend: Backend): TeamStore {
  return backend.kind === "sqlite" ? createSqliteTeamStore(backend.db) : createPostgresTeamStore(backend.db);
}

function agent(id: string, at: number, extra: Partial<AgentRecord> = {}): AgentRecord {
  return {
    id,
    name: id.toUpperCase(),
    emoji: "🤖",
    toolsDeny: [],
    memory: true,
    skills: [],
    askFirst: [],
    createdAt: at,
    updatedAt: at,
    ...extra,
  };
}

function channel(id: string, at: number, extra: Partial<ChannelRecord> = {}): ChannelRecord {
  return {
    id,
    kind: "group",
    name: `#${id}`,
    members: [
      { type: "user", id: "alice" },
      { type: "agent", id: "writer" },
    ],
    chain: [],
    createdBy: "alice",
    createdAt: at,
    updatedAt: at,
    ...extra,
  };
}

function post(store: TeamStore, channelId: string, text: string, author = "alice", at = 1000) {
  return store.messages.insert({
    channelId,
    author: { type: author.startsWith("agent:") ? "agent" : "user", id: author.replace("agent:", "") },
    text,
    mentions: [],
    createdAt: at,
  });
}

describeBackends("team store", (open, kind) => {
  it("keeps each person's pinned and archived chats apart, and drops them with the chat", async () => {
    const store = storeOf(await open());
    await store.channels.insert(channel("ops", 1));
    await store.channels.insert(channel("dev", 2));
    await store.channels.setPrefs("ops", "alice", { pinnedAt: 10 });
    await store.channels.setPrefs("dev", "alice", { archivedAt: 20 });
    await store.channels.setPrefs("ops", "bob", { archivedAt: 30, pinnedAt: 31 });
    expect(await store.channels.prefsOf("alice")).toEqual(
      new Map([
        ["ops", { pinnedAt: 10 }],
        ["dev", { archivedAt: 20 }],
      ]),
    );
    await store.channels.setPrefs("ops", "alice", { archivedAt: 40 });
    await store.channels.setPrefs("dev", "alice", {});
    expect(await store.channels.prefsOf("alice")).toEqual(new Map([["ops", { archivedAt: 40 }]]));
    await store.channels.delete("ops");
    expect(await store.channels.prefsOf("alice")).toEqual(new Map());
    expect(await store.channels.prefsOf("bob")).toEqual(new Map());
  });

  it("leases runs to instances with fencing where several share the database (PostgreSQL only)", async () => {
    const store = storeOf(await open());
    if (kind === "sqlite") {
      // One process owns a SQLite file and every run in it.
      expect(store.leases).toBeUndefined();
      return;
    }
    const leases = store.leases!;
    const base = { channelId: "ops", agentId: "writer", triggerMessageId: 1, depth: 0, startedAt: 10 };
    const ref = { userId: "alice", sessionId: "s" };
    for (const id of ["r1", "r2", "r3"]) {
      await store.runs.insert({ run: { ...base, id, status: "running" }, ref, requestedBy: "alice" });
    }
    expect(await leases.acquire("r1", "A", 1000)).toBe(1);
    expect(await leases.acquire("r2", "A", 1000)).toBe(1);
    expect(await leases.acquire("r3", "B", 5000)).toBe(1);
    expect((await leases.renew("A", ["r1", "r2", "r3"], 2000)).sort()).toEqual(["r1", "r2"]);
    expect((await leases.ownersIn("ops")).sort()).toEqual(["A", "B"]);
    expect(await leases.ownersIn("elsewhere")).toEqual([]);
    expect(await leases.renew("A", [], 2000)).toEqual([]);
    expect(await leases.updateFenced({ ...base, id: "r1", status: "running", startedAt: 11 }, 1)).toBe(true);
    // A's lease on r1 ran out at 2000; at 3000 another instance closes it and bumps the fence.
    const expired = await leases.expire(3000, "instance lost");
    expect(expired.map((s) => s.run.id).sort()).toEqual(["r1", "r2"]);
    expect(expired[0]?.run).toMatchObject({ status: "error", error: "instance lost", endedAt: 3000 });
    expect(await leases.expire(3000, "instance lost")).toEqual([]);
    // The superseded owner can no longer write, nor renew.
    expect(await leases.updateFenced({ ...base, id: "r1", status: "done", endedAt: 3500 }, 1)).toBe(false);
    expect(await leases.isCurrent("r1", 1)).toBe(false);
    expect(await leases.isCurrent("r3", 1)).toBe(true);
    expect((await store.runs.get("r1"))?.run.status).toBe("error");
    expect(await leases.renew("A", ["r1"], 9000)).toEqual([]);
    expect((await store.runs.get("r3"))?.run.status).toBe("running");
    expect(await leases.acquire("r3", "C", 9000)).toBe(2);
    expect(await leases.updateFenced({ ...base, id: "r3", status: "done", endedAt: 4000 }, 1)).toBe(false);
    expect(await leases.updateFenced({ ...base, id: "r3", status: "done", endedAt: 4000 }, 2)).toBe(true);
    expect(await leases.isCurrent("r3", 2)).toBe(false);
    // A run inserted already leased: renewable by its owner, taken over with a new fence.
    const r4 = { run: { ...base, id: "r4", status: "queued" as const }, ref, requestedBy: "alice" };
    expect(await leases.insertLeased(r4, "D", 5000)).toBe(1);
    expect((await store.runs.get("r4"))?.run).toMatchObject({ id: "r4", status: "queued", channelId: "ops" });
    expect(await leases.renew("D", ["r4"], 6000)).toEqual(["r4"]);
    expect(await leases.renew("A", ["r4"], 6000)).toEqual([]);
    expect(await leases.expire(5500, "instance lost")).toEqual([]);
    expect((await leases.expire(6001, "instance lost")).map((s) => s.run.id)).toEqual(["r4"]);
  });

  it("keeps agents with every field, oldest first, and updates and deletes them", async () => {
    const store = storeOf(await open());
    await store.agents.insert(
      agent("writer", 2000, { model: "openai:gpt-4.1", toolsAllow: ["read_file"], knowledgeBases: ["docs"] }),
    );
    await store.agents.insert(
      agent("coder", 1000, { memory: false, skills: ["git"], toolsDeny: ["execute_command"] }),
    );
    const listed = await store.agents.list();
    expect(listed.map((a) => a.id)).toEqual(["coder", "writer"]);
    expect(await store.agents.get("writer")).toEqual(
      agent("writer", 2000, { model: "openai:gpt-4.1", toolsAllow: ["read_file"], knowledgeBases: ["docs"] }),
    );
    expect(await store.agents.get("coder")).toEqual(
      agent("coder", 1000, { memory: false, skills: ["git"], toolsDeny: ["execute_command"] }),
    );
    await expect(store.agents.insert(agent("coder", 3000))).rejects.toThrow();
    await store.agents.update({ ...agent("coder", 1000), name: "Coder 2", updatedAt: 5000 });
    expect(await store.agents.get("coder")).toMatchObject({
      name: "Coder 2",
      updatedAt: 5000,
      createdAt: 1000,
      memory: true,
    });
    expect(await store.agents.get("coder")).not.toHaveProperty("model");
    expect(await store.agents.delete("coder")).toBe(true);
    expect(await store.agents.delete("coder")).toBe(false);
    expect(await store.agents.get("coder")).toBeUndefined();
  });

  it("keeps an agent's ask-first tools, and reads [] for an agent stored without them", async () => {
    const backend = await open();
    const store = storeOf(backend);
    await store.agents.insert(agent("ops", 1000, { askFirst: ["execute_command", "github_*"] }));
    expect((await store.agents.get("ops"))?.askFirst).toEqual(["execute_command", "github_*"]);
    await store.agents.update({ ...agent("ops", 1000), askFirst: [], updatedAt: 2000 });
    expect((await store.agents.get("ops"))?.askFirst).toEqual([]);
    await store.agents.update({ ...agent("ops", 1000), askFirst: ["write_file"], updatedAt: 3000 });
    expect((await store.agents.list()).map((a) => a.askFirst)).toEqual([["write_file"]]);
    // A row written before the column existed (the column's default) and a damaged value read as [].
    await rawSql(
      backend,
      `INSERT INTO team_agents (id, name, emoji, tools_deny_json, memory, skills_json, created_at, updated_at)
       VALUES ('old', 'Old', '', '[]', 1, '[]', 1, 1)`,
    );
    expect(await store.agents.get("old")).toEqual({ ...agent("old", 1), name: "Old", emoji: "" });
    await rawSql(backend, "UPDATE team_agents SET ask_first_json = '{' WHERE id = 'old'");
    expect((await store.agents.get("old"))?.askFirst).toEqual([]);
  });

  it("keeps an agent's owner and who sees it; a row from before owners reads as everyone's", async () => {
    const backend = await open();
    const store = storeOf(backend);
    await store.agents.insert(
      agent("mine", 1, { ownerId: "alice", visibility: "people", allowedUsers: ["bob"] }),
    );
    expect(await store.agents.get("mine")).toEqual(
      agent("mine", 1, { ownerId: "alice", visibility: "people", allowedUsers: ["bob"] }),
    );
    // An update changes who sees it; the owner stays (it is not an updatable column).
    await store.agents.update(agent("mine", 1, { ownerId: "carol", visibility: "private", updatedAt: 2 }));
    expect(await store.agents.get("mine")).toEqual(
      agent("mine", 1, { ownerId: "alice", visibility: "private", updatedAt: 2 }),
    );
    expect((await store.agents.list()).map((a) => [a.id, a.ownerId, a.visibility])).toEqual([
      ["mine", "alice", "private"],
    ]);
    await rawSql(
      backend,
      `INSERT INTO team_agents (id, name, emoji, tools_deny_json, memory, skills_json, created_at, updated_at)
       VALUES ('legacy', 'Legacy', '', '[]', 1, '[]', 3, 3)`,
    );
    const legacy = await store.agents.get("legacy");
    expect(legacy).not.toHaveProperty("ownerId");
    expect(legacy).not.toHaveProperty("visibility");
    // A visibility outside the three is refused by the column's check.
    await expect(
      rawSql(backend, "UPDATE team_agents SET visibility = 'friends' WHERE id = 'legacy'"),
    ).rejects.toThrow();
  });

  it("keeps a channel's queue mode on insert and update; unset or unknown reads as no mode", async () => {
    const backend = await open();
    const store = storeOf(backend);
    await store.channels.insert(channel("ops", 1, { queueMode: "collect" }));
    await store.channels.insert(channel("dm", 2, { kind: "direct" }));
    expect((await store.channels.get("ops"))?.queueMode).toBe("collect");
    expect(await store.channels.get("dm")).not.toHaveProperty("queueMode");
    const ops = (await store.channels.get("ops")) as ChannelRecord;
    for (const mode of ["steer", "followup", "interrupt", "collect"] as const) {
      await store.channels.update({ ...ops, queueMode: mode, updatedAt: 5 });
      expect((await store.channels.get("ops"))?.queueMode).toBe(mode);
    }
    await store.channels.update({ ...ops, queueMode: undefined, updatedAt: 6 });
    expect(await store.channels.get("ops")).not.toHaveProperty("queueMode");
    await store.channels.update({ ...ops, queueMode: "interrupt", updatedAt: 7 });
    expect((await store.channels.list()).map((c) => [c.id, c.queueMode])).toEqual([
      ["ops", "interrupt"],
      ["dm", undefined],
    ]);
    await rawSql(backend, "UPDATE team_channels SET queue_mode = 'someday' WHERE id = 'ops'");
    expect(await store.channels.get("ops")).not.toHaveProperty("queueMode");
  });

  it("keeps an MCP App's call waiting for approval until its person takes it, once, before it expires", async () => {
    const store = storeOf(await open());
    await store.channels.insert(channel("apps", 1));
    const call = {
      actor: "alice",
      channelId: "apps",
      runId: "r1",
      callId: "c1",
      tool: "clock_get-time",
      name: "get-time",
      args: { zone: "UTC" },
      expiresAt: 5000,
    };
    const owner = { actor: "alice", channelId: "apps", runId: "r1", callId: "c1" };
    await store.appCalls.put("a1", call, 1000);
    // Someone else, or another app of the same person, takes nothing (and uses nothing up).
    expect(await store.appCalls.take("a1", { ...owner, actor: "bob" }, 2000)).toBeUndefined();
    expect(await store.appCalls.take("a1", { ...owner, callId: "c2" }, 2000)).toBeUndefined();
    expect(await store.appCalls.take("a1", owner, 2000)).toEqual(call);
    expect(await store.appCalls.take("a1", owner, 2000)).toBeUndefined();
    // Expired: not given out; the next put drops it.
    await store.appCalls.put("a2", { ...call, expiresAt: 3000 }, 1000);
    expect(await store.appCalls.take("a2", owner, 3000)).toBeUndefined();
    await store.appCalls.put("a3", { ...call, expiresAt: 3000 }, 1000);
    await store.appCalls.put("a4", call, 4000);
    expect(await store.appCalls.take("a3", owner, 1000)).toBeUndefined();
    // A chat's waiting calls go with it.
    await store.channels.delete("apps");
    expect(await store.appCalls.take("a4", owner, 4000)).toBeUndefined();
  });

  it("keeps approve-always grants per chat, agent and tool; they go with their chat", async () => {
    const store = storeOf(await open());
    await store.channels.insert(channel("ops", 1));
    await store.channels.insert(channel("dev", 1));
    const grant = {
      channelId: "ops",
      agentId: "writer",
      tool: "execute_command",
      grantedBy: "alice",
      grantedAt: 20,
    };
    expect(await store.grants.has("ops", "writer", "execute_command")).toBe(false);
    expect(await store.grants.list("ops")).toEqual([]);
    await store.grants.add(grant);
    await store.grants.add({ ...grant, grantedBy: "bob", grantedAt: 30 });
    await store.grants.add({ ...grant, tool: "github_*", grantedAt: 10 });
    await store.grants.add({ ...grant, agentId: "coder", grantedAt: 40 });
    await store.grants.add({ ...grant, channelId: "dev", grantedAt: 50 });
    expect(await store.grants.has("ops", "writer", "execute_command")).toBe(true);
    expect(await store.grants.has("ops", "writer", "write_file")).toBe(false);
    expect(await store.grants.has("ops", "editor", "execute_command")).toBe(false);
    // Oldest first; adding an existing grant changes nothing.
    expect(await store.grants.list("ops")).toEqual([
      { ...grant, tool: "github_*", grantedAt: 10 },
      grant,
      { ...grant, agentId: "coder", grantedAt: 40 },
    ]);
    expect(await store.grants.delete("ops", "writer", "execute_command")).toBe(true);
    expect(await store.grants.delete("ops", "writer", "execute_command")).toBe(false);
    expect(await store.grants.has("ops", "writer", "execute_command")).toBe(false);
    expect(await store.grants.has("dev", "writer", "execute_command")).toBe(true);
    await expect(store.grants.add({ ...grant, channelId: "missing" })).rejects.toThrow();
    expect(await store.channels.delete("ops")).toBe(true);
    expect(await store.grants.list("ops")).toEqual([]);
    expect((await store.grants.list("dev")).map((g) => g.channelId)).toEqual(["dev"]);
  });

  it("keeps channels with members and chain; members come and go; delete cascades", async () => {
    const store = storeOf(await open());
    await store.channels.insert(
      channel("ops", 1000, {
        leaderAgentId: "writer",
        chain: [{ agentId: "writer", requiresApproval: true }],
      }),
    );
    await store.channels.insert(
      channel("dm", 500, { kind: "direct", members: [{ type: "user", id: "bob" }] }),
    );
    expect((await store.channels.list()).map((c) => c.id)).toEqual(["dm", "ops"]);
    const ops = await store.channels.get("ops");
    expect(ops).toMatchObject({
      leaderAgentId: "writer",
      chain: [{ agentId: "writer", requiresApproval: true }],
    });
    expect(ops?.members).toEqual([
      { type: "agent", id: "writer" },
      { type: "user", id: "alice" },
    ]);
    await store.channels.addMember("ops", { type: "user", id: "carol" }, 2000);
    await store.channels.addMember("ops", { type: "user", id: "carol" }, 3000);
    expect((await store.channels.get("ops"))?.members.filter((m) => m.id === "carol")).toHaveLength(1);
    expect(await store.channels.userMemberships()).toEqual(
      expect.arrayContaining([
        { channelId: "ops", userId: "alice" },
        { channelId: "ops", userId: "carol" },
        { channelId: "dm", userId: "bob" },
      ]),
    );
    expect(await store.channels.removeMember("ops", { type: "user", id: "carol" })).toBe(true);
    expect(await store.channels.removeMember("ops", { type: "user", id: "carol" })).toBe(false);
    await store.channels.update({
      ...(ops as ChannelRecord),
      name: "#ops-2",
      leaderAgentId: undefined,
      chain: [],
      updatedAt: 9,
    });
    const updated = await store.channels.get("ops");
    expect(updated).toMatchObject({ name: "#ops-2", chain: [], updatedAt: 9 });
    expect(updated).not.toHaveProperty("leaderAgentId");

    await post(store, "ops", "hello");
    await store.flows.save(flow("f1", "ops", "running"));
    await store.messages.setMarker("alice", "ops", 1, 1);
    expect(await store.channels.delete("ops")).toBe(true);
    expect(await store.channels.get("ops")).toBeUndefined();
    expect(await store.messages.list("ops", { limit: 10 })).toEqual([]);
    expect(await store.flows.get("f1")).toBeUndefined();
    expect(await store.messages.marker("alice", "ops")).toBe(0);
  });

  it("a channel insert is one transaction: a failing member leaves no channel", async () => {
    const store = storeOf(await open());
    const bad = channel("ops", 1, {
      members: [
        { type: "user", id: "alice" },
        { type: "robot" as "user", id: "x" },
      ],
    });
    await expect(store.channels.insert(bad)).rejects.toThrow();
    expect(await store.channels.get("ops")).toBeUndefined();
  });

  it("pages messages oldest first, before and after an id, and in a range", async () => {
    const store = storeOf(await open());
    await store.channels.insert(channel("ops", 1));
    await store.channels.insert(channel("other", 1));
    const ids: number[] = [];
    for (let i = 1; i <= 6; i++) {
      ids.push((await post(store, "ops", `message ${i}`, "alice", 1000 + i)).id);
      await post(store, "other", `noise ${i}`);
    }
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    const texts = (list: { text: string }[]) => list.map((m) => m.text);
    expect(texts(await store.messages.list("ops", { limit: 2 }))).toEqual(["message 5", "message 6"]);
    expect(texts(await store.messages.list("ops", { limit: 2, before: ids[4] }))).toEqual([
      "message 3",
      "message 4",
    ]);
    expect(texts(await store.messages.list("ops", { limit: 2, after: ids[1] }))).toEqual([
      "message 3",
      "message 4",
    ]);
    expect(texts(await store.messages.list("ops", { limit: 10, after: ids[1], before: ids[4] }))).toEqual([
      "message 3",
      "message 4",
    ]);
    expect(texts(await store.messages.range("ops", ids[0] as number, ids[4] as number, 2))).toEqual([
      "message 4",
      "message 5",
    ]);
    const first = await store.messages.get(ids[0] as number);
    expect(first).toMatchObject({ channelId: "ops", author: { type: "user", id: "alice" }, createdAt: 1001 });
    expect(first?.parts).toEqual([{ type: "text", text: "message 1" }]);
    expect(await store.messages.delete(ids[0] as number)).toBe(true);
    expect(await store.messages.get(ids[0] as number)).toBeUndefined();
    expect(await store.messages.delete(ids[0] as number)).toBe(false);
  });

  it("keeps parts, replies, versions, edits and the run a message came from", async () => {
    const store = storeOf(await open());
    await store.channels.insert(channel("ops", 1));
    const question = await post(store, "ops", "what is up?");
    const parts = [
      { type: "reasoning" as const, text: "thinking" },
      { type: "text" as const, text: "all good" },
    ];
    const answer = await store.messages.insert({
      channelId: "ops",
      author: { type: "agent", id: "writer" },
      text: "all good",
      mentions: ["alice"],
      createdAt: 2,
      runId: "run-1",
      replyTo: question.id,
      parts,
    });
    const second = await store.messages.insert({
      channelId: "ops",
      author: { type: "agent", id: "writer" },
      text: "",
      mentions: [],
      createdAt: 3,
      runId: "run-2",
      replyTo: question.id,
      versionOf: answer.id,
    });
    expect(second.parts).toEqual([]);
    expect(await store.messages.get(answer.id)).toMatchObject({
      parts,
      mentions: ["alice"],
      runId: "run-1",
      replyTo: question.id,
    });
    expect((await store.messages.replies(question.id)).map((m) => m.id)).toEqual([answer.id, second.id]);
    expect((await store.messages.byRun("run-2"))?.versionOf).toBe(answer.id);
    expect(await store.messages.byRun("missing")).toBeUndefined();
    const edited = await store.messages.edit(question.id, "what is down?", 99);
    expect(edited).toMatchObject({
      text: "what is down?",
      editedAt: 99,
      parts: [{ type: "text", text: "what is down?" }],
    });
    expect(await store.messages.edit(123_456, "x", 1)).toBeUndefined();
    expect((await store.messages.search("down", {}, 10)).map((m) => m.id)).toEqual([question.id]);
    expect(await store.messages.search("up", {}, 10)).toEqual([]);
  });

  it("searches by word prefix, CJK bigram and folded diacritics, within a scope", async () => {
    const store = storeOf(await open());
    await store.channels.insert(channel("ops", 1));
    await store.channels.insert(channel("private", 1, { members: [{ type: "user", id: "bob" }] }));
    const deploy = await post(store, "ops", "The deployment failed at 3am");
    const db = await post(store, "ops", "我们的数据库需要备份");
    const cafe = await post(store, "ops", "Meet at the Café tomorrow");
    const hidden = await post(store, "private", "deploy the secret build", "bob");
    const ids = (list: { id: number }[]) => list.map((m) => m.id);
    expect(ids(await store.messages.search("deploy", { channelId: "ops" }, 10))).toEqual([deploy.id]);
    expect(new Set(ids(await store.messages.search("deploy", {}, 10)))).toEqual(
      new Set([deploy.id, hidden.id]),
    );
    expect(ids(await store.messages.search("deploy", { memberUserId: "alice" }, 10))).toEqual([deploy.id]);
    expect(ids(await store.messages.search("deploy", { memberUserId: "bob" }, 10))).toEqual([hidden.id]);
    expect(ids(await store.messages.search("数据库", {}, 10))).toEqual([db.id]);
    expect(await store.messages.search("数库", {}, 10)).toEqual([]);
    expect(ids(await store.messages.search("cafe", {}, 10))).toEqual([cafe.id]);
    expect(ids(await store.messages.search("deployment 3am", {}, 10))).toEqual([deploy.id]);
    expect(await store.messages.search("deployment nothing", {}, 10)).toEqual([]);
    expect(await store.messages.search("  !!  ", {}, 10)).toEqual([]);
    expect(await store.messages.search('it\'s "quoted" \\ back', {}, 10)).toEqual([]);
    expect(ids(await store.messages.search("deploy", {}, 1))).toHaveLength(1);
    await store.messages.delete(deploy.id);
    expect(ids(await store.messages.search("deploy", { channelId: "ops" }, 10))).toEqual([]);
  });

  it("moves read markers only forward and counts unread messages from others", async () => {
    const store = storeOf(await open());
    await store.channels.insert(channel("ops", 1));
    await store.channels.insert(channel("quiet", 1));
    const a = await post(store, "ops", "one", "agent:writer");
    await post(store, "ops", "mine", "alice");
    const c = await post(store, "ops", "three", "agent:writer");
    expect(await store.messages.marker("alice", "ops")).toBe(0);
    expect(await store.messages.unread("alice", ["ops", "quiet"])).toEqual(
      new Map([
        ["ops", 2],
        ["quiet", 0],
      ]),
    );
    await store.messages.setMarker("alice", "ops", a.id, 5);
    expect((await store.messages.unread("alice", ["ops"])).get("ops")).toBe(1);
    await store.messages.setMarker("alice", "ops", c.id, 6);
    await store.messages.setMarker("alice", "ops", a.id, 7);
    expect(await store.messages.marker("alice", "ops")).toBe(c.id);
    expect((await store.messages.unread("alice", ["ops"])).get("ops")).toBe(0);
    expect(await store.messages.unread("alice", [])).toEqual(new Map());
    // unseen: the marker as it was, and the move (still only forward).
    const previous = async (upto: number, at: number) =>
      (await store.messages.unseen("agent:writer", "ops", upto, at, 40)).previous;
    expect(await previous(a.id, 8)).toBe(0);
    expect(await previous(c.id, 9)).toBe(a.id);
    expect(await previous(a.id, 10)).toBe(c.id);
    expect(await store.messages.marker("agent:writer", "ops")).toBe(c.id);
  });

  it("keeps runs, lists the open ones and deletes a channel's runs", async () => {
    const store = storeOf(await open());
    const base = { channelId: "ops", agentId: "writer", triggerMessageId: 1, depth: 0, startedAt: 10 };
    await store.runs.insert({
      run: { ...base, id: "r1", status: "queued" },
      ref: { userId: "alice", sessionId: "s1" },
      requestedBy: "alice",
    });
    await store.runs.insert({
      run: { ...base, id: "r2", status: "running", flowId: "f1", stepIndex: 2, depth: 1, parentRunId: "r1" },
      ref: { userId: "agent:writer", sessionId: "s2" },
      requestedBy: "bob",
    });
    await store.runs.insert({
      run: { ...base, id: "r3", channelId: "dm", status: "queued" },
      ref: { userId: "alice", sessionId: "s3" },
      requestedBy: "alice",
    });
    expect((await store.runs.get("r2"))?.run).toEqual({
      ...base,
      id: "r2",
      status: "running",
      flowId: "f1",
      stepIndex: 2,
      depth: 1,
      parentRunId: "r1",
    });
    expect((await store.runs.get("r2"))?.ref).toEqual({ userId: "agent:writer", sessionId: "s2" });
    expect((await store.runs.get("r2"))?.requestedBy).toBe("bob");
    const usage = { inputTokens: 10, outputTokens: 5 };
    await store.runs.update({
      ...base,
      id: "r1",
      status: "error",
      error: "boom",
      usage,
      startedAt: 11,
      endedAt: 20,
    } as never);
    expect((await store.runs.get("r1"))?.run).toMatchObject({
      status: "error",
      error: "boom",
      usage,
      startedAt: 11,
      endedAt: 20,
    });
    expect((await store.runs.listOpen()).map((s) => s.run.id).sort()).toEqual(["r2", "r3"]);
    await store.runs.deleteByChannel("ops");
    expect(await store.runs.get("r2")).toBeUndefined();
    expect(await store.runs.get("r3")).toBeDefined();
  });

  it("keeps runs waiting for approval apart from open ones; one resumer claims each", async () => {
    const store = storeOf(await open());
    const base = { channelId: "ops", agentId: "writer", triggerMessageId: 1, depth: 0 };
    const s1 = { userId: "agent:writer", sessionId: "ops" };
    const s2 = { userId: "agent:writer", sessionId: "dev" };
    const insert = (id: string, status: "queued" | "running" | "waiting", startedAt: number, ref = s1) =>
      store.runs.insert({ run: { ...base, id, status, startedAt }, ref, requestedBy: "alice" });
    await insert("w-late", "waiting", 30);
    await insert("w-early", "waiting", 10);
    await insert("w-other", "waiting", 20, s2);
    await insert("running", "running", 5);
    await insert("queued", "queued", 6);
    // A running run that starts waiting (the way the run manager saves it).
    await store.runs.update({ ...base, id: "running", status: "waiting", startedAt: 5 });

    expect((await store.runs.get("w-early"))?.run).toEqual({
      ...base,
      id: "w-early",
      status: "waiting",
      startedAt: 10,
    });
    const ids = (list: { run: { id: string } }[]) => list.map((s) => s.run.id);
    expect(ids(await store.runs.listWaiting())).toEqual(["running", "w-early", "w-other", "w-late"]);
    expect(ids(await store.runs.listWaiting(s1))).toEqual(["running", "w-early", "w-late"]);
    expect(ids(await store.runs.listWaiting(s2))).toEqual(["w-other"]);
    expect(await store.runs.listWaiting({ userId: "agent:coder", sessionId: "ops" })).toEqual([]);
    expect(ids(await store.runs.listOpen())).toEqual(["queued"]);

    const claims = await Promise.all([
      store.runs.claimWaiting("w-early", 100),
      store.runs.claimWaiting("w-early", 101),
    ]);
    expect(claims.sort()).toEqual([false, true]);
    expect(await store.runs.claimWaiting("w-early", 102)).toBe(false);
    expect(await store.runs.claimWaiting("queued", 103)).toBe(false);
    expect(await store.runs.claimWaiting("missing", 104)).toBe(false);
    const claimed = (await store.runs.get("w-early"))?.run;
    expect(claimed?.status).toBe("running");
    expect([100, 101]).toContain(claimed?.startedAt);
    expect((await store.runs.get("queued"))?.run).toMatchObject({ status: "queued", startedAt: 6 });
    expect(ids(await store.runs.listWaiting(s1))).toEqual(["running", "w-late"]);
    expect(ids(await store.runs.listOpen()).sort()).toEqual(["queued", "w-early"]);
  });

  it("leases never cover a waiting run (PostgreSQL only)", async () => {
    const store = storeOf(await open());
    if (kind === "sqlite") return;
    const leases = store.leases!;
    const base = { channelId: "ops", agentId: "writer", triggerMessageId: 1, depth: 0, startedAt: 10 };
    const stored = {
      run: { ...base, id: "r1", status: "running" as const },
      ref: { userId: "a", sessionId: "s" },
      requestedBy: "a",
    };
    const fence = await leases.insertLeased(stored, "A", 1000);
    // The owner saves the run as waiting: allowed under its fence; from then on it holds no lease.
    expect(await leases.updateFenced({ ...base, id: "r1", status: "waiting" }, fence)).toBe(true);
    expect(await leases.renew("A", ["r1"], 2000)).toEqual([]);
    expect(await leases.ownersIn("ops")).toEqual([]);
    expect(await leases.isCurrent("r1", fence)).toBe(false);
    expect(await leases.expire(5000, "instance lost")).toEqual([]);
    expect((await store.runs.get("r1"))?.run.status).toBe("waiting");
    // Resumed: claimed, then leased anew by whoever resumes it.
    expect(await store.runs.claimWaiting("r1", 6000)).toBe(true);
    const next = await leases.acquire("r1", "B", 9000);
    expect(next).toBe(fence + 1);
    expect(await leases.isCurrent("r1", next)).toBe(true);
    expect(await leases.ownersIn("ops")).toEqual(["B"]);
  });

  it("saves flows whole, replaces them, and lists them by status", async () => {
    const store = storeOf(await open());
    await store.channels.insert(channel("ops", 1));
    await store.flows.save(flow("f1", "ops", "running", 10));
    await store.flows.save(flow("f2", "ops", "paused", 5));
    await store.flows.save(flow("f3", "ops", "running", 1));
    expect((await store.flows.listByStatus("running")).map((f) => f.id)).toEqual(["f3", "f1"]);
    const next: FlowRecord = { ...flow("f1", "ops", "done", 10), currentStep: 1, updatedAt: 99 };
    next.steps[0] = { ...next.steps[0]!, status: "completed", output: "drafted" };
    await store.flows.save(next);
    expect(await store.flows.get("f1")).toEqual(next);
    expect((await store.flows.listByStatus("running")).map((f) => f.id)).toEqual(["f3"]);
    expect(await store.flows.get("nope")).toBeUndefined();
  });

  it("keeps team settings", async () => {
    const store = storeOf(await open());
    expect(await store.meta.get("seeded")).toBeUndefined();
    await store.meta.set("seeded", "1");
    await store.meta.set("seeded", "2");
    expect(await store.meta.get("seeded")).toBe("2");
    expect(await store.meta.claim("seeded", "3")).toBe(false);
    expect(await store.meta.get("seeded")).toBe("2");
    const claims = await Promise.all([1, 2, 3].map((n) => store.meta.claim("starters", String(n))));
    expect(claims.filter(Boolean)).toHaveLength(1);
  });
});

function flow(id: string, channelId: string, status: FlowRecord["status"], createdAt = 1): FlowRecord {
  return {
    id,
    channelId,
    triggerMessageId: 1,
    status,
    currentStep: 0,
    steps: [
      { agentId: "writer", requiresApproval: false, status: "running", input: "go" },
      { agentId: "editor", requiresApproval: true, status: "waiting" },
    ],
    createdAt,
    updatedAt: createdAt,
  };
}

describeBackends("persona store", (open, kind) => {
  it("reads, writes, keeps a persona when asked only to fill a missing one, and removes it", async () => {
    const backend = await open();
    const personas: PersonaStore =
      backend.kind === "sqlite" ? new PersonaFiles(dirname(backend.file)) : new PgPersonaStore(backend.db);
    expect(await personas.read("writer")).toEqual({ agentId: "writer", content: "", status: "missing" });
    await personas.writeIfMissing("writer", "# Writer\n\nYou write.");
    await personas.writeIfMissing("writer", "# Other");
    expect(await personas.read("writer")).toEqual({
      agentId: "writer",
      content: "# Writer\n\nYou write.",
      status: "ok",
    });
    expect(await personas.write("writer", "  \n")).toMatchObject({ status: "empty" });
    expect((await personas.read("writer")).status).toBe("empty");
    await personas.remove("writer");
    expect((await personas.read("writer")).status).toBe("missing");
    expect(kind).toBe(backend.kind);
  });
});
