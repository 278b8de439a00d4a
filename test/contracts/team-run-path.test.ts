/**
 * The team store's reads and writes of a run's path in one step each, on SQLite and PostgreSQL: a post
 * that marks itself read, the agent's unseen messages with its marker moved, a channel with every
 * agent, and (PostgreSQL) an answer stored only while the run's fence is current. Each gives what the
 * calls it stands for give.
 */
import { expect, it } from "vitest";
import { createPostgresTeamStore, createSqliteTeamStore, type TeamStore } from "../../src/team/team-store.js";
import type { AgentRecord, ChannelRecord } from "../../src/team/types.js";
import { type Backend, describeBackends } from "./backends.js";

function storeOf(backend: Backend): TeamStore {
  return backend.kind === "sqlite" ? createSqliteTeamStore(backend.db) : createPostgresTeamStore(backend.db);
}

function agent(id: string, at: number): AgentRecord {
  return {
    id,
    name: id.toUpperCase(),
    emoji: "🤖",
    toolsDeny: [],
    memory: true,
    skills: [],
    askFirst: ["shell"],
    createdAt: at,
    updatedAt: at,
  };
}

function channel(id: string, at: number): ChannelRecord {
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
    queueMode: "followup",
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

describeBackends("team store, a run's path", (open, kind) => {
  it("stores a post already read by its author, and never moves a marker back", async () => {
    const store = storeOf(await open());
    await store.channels.insert(channel("ops", 1));
    const first = await post(store, "ops", "from bob", "bob");
    const own = await store.messages.insert(
      { channelId: "ops", author: { type: "user", id: "alice" }, text: "hi", mentions: [], createdAt: 2000 },
      { readBy: "alice" },
    );
    expect(own).toMatchObject({ text: "hi", parts: [{ type: "text", text: "hi" }] });
    expect(await store.messages.get(own.id)).toEqual(own);
    expect(await store.messages.marker("alice", "ops")).toBe(own.id);
    expect(own.id).toBeGreaterThan(first.id);
    expect((await store.messages.unread("alice", ["ops"])).get("ops")).toBe(0);
    expect(await store.messages.search("hi", { channelId: "ops" }, 5)).toEqual([own]);
    // Bob has read nothing; a post without readBy moves no marker.
    expect(await store.messages.marker("bob", "ops")).toBe(0);
    await store.messages.setMarker("carol", "ops", own.id + 100, 3000);
    await store.messages.insert(
      {
        channelId: "ops",
        author: { type: "user", id: "carol" },
        text: "late",
        mentions: [],
        createdAt: 4000,
      },
      { readBy: "carol" },
    );
    expect(await store.messages.marker("carol", "ops")).toBe(own.id + 100);
  });

  it("reads what an agent has not seen and moves its marker in one step", async () => {
    const store = storeOf(await open());
    await store.channels.insert(channel("ops", 1));
    const ids: number[] = [];
    for (let i = 1; i <= 5; i++) ids.push((await post(store, "ops", `m${i}`, "alice", 1000 + i)).id);
    const [m1, m2, m3, m4, m5] = ids as [number, number, number, number, number];
    const first = await store.messages.unseen("agent:writer", "ops", m3, 50, 10);
    expect(first.previous).toBe(0);
    expect(first.messages.map((m) => m.text)).toEqual(["m1", "m2", "m3"]);
    expect(first.messages[0]).toEqual(await store.messages.get(m1));
    expect(await store.messages.marker("agent:writer", "ops")).toBe(m3);
    // Only the newest `limit`, oldest first, as `range` gives them.
    const second = await store.messages.unseen("agent:writer", "ops", m5, 60, 1);
    expect(second).toEqual({ previous: m3, messages: await store.messages.range("ops", m3, m5, 1) });
    expect(second.messages.map((m) => m.text)).toEqual(["m5"]);
    // Nothing new, and a marker that is ahead stays where it is.
    expect(await store.messages.unseen("agent:writer", "ops", m5, 70, 10)).toEqual({
      previous: m5,
      messages: [],
    });
    expect(await store.messages.unseen("agent:writer", "ops", m2, 80, 10)).toEqual({
      previous: m5,
      messages: [],
    });
    expect(await store.messages.marker("agent:writer", "ops")).toBe(m5);
    expect(m4).toBeGreaterThan(m3);
    // Another reader is apart.
    expect((await store.messages.unseen("agent:other", "ops", m2, 90, 10)).messages.map((m) => m.id)).toEqual(
      [m1, m2],
    );
  });

  it("reads a channel with every agent in one step", async () => {
    const store = storeOf(await open());
    expect(await store.channels.getWithAgents("ops")).toEqual({ channel: undefined, agents: [] });
    await store.agents.insert(agent("writer", 20));
    await store.agents.insert({ ...agent("critic", 10), model: "openai:gpt-x", toolsAllow: ["read_file"] });
    await store.channels.insert(channel("ops", 1));
    await store.channels.addMember("ops", { type: "user", id: "bob" }, 5);
    const read = await store.channels.getWithAgents("ops");
    expect(read.channel).toEqual(await store.channels.get("ops"));
    expect(read.agents).toEqual(await store.agents.list());
    expect(read.agents.map((a) => a.id)).toEqual(["critic", "writer"]);
    expect((await store.channels.getWithAgents("nope")).channel).toBeUndefined();
  });

  it("stores a run's answer only while its fence is current (PostgreSQL only)", async () => {
    const store = storeOf(await open());
    if (kind === "sqlite") {
      expect(store.leases).toBeUndefined();
      return;
    }
    const leases = store.leases!;
    await store.channels.insert(channel("ops", 1));
    const base = { channelId: "ops", agentId: "writer", triggerMessageId: 1, depth: 0, startedAt: 10 };
    const stored = {
      run: { ...base, id: "r1", status: "running" as const },
      ref: { userId: "a", sessionId: "s" },
    };
    const fence = await leases.insertLeased({ ...stored, requestedBy: "alice" }, "A", 1000);
    const answer = {
      channelId: "ops",
      author: { type: "agent" as const, id: "writer" },
      text: "the answer",
      runId: "r1",
      replyTo: 1,
      mentions: [],
      createdAt: 2000,
    };
    const posted = await leases.insertMessageIfCurrent("r1", fence, answer);
    expect(posted).toBeDefined();
    expect(await store.messages.get(posted?.id ?? 0)).toEqual(posted);
    expect(await store.messages.byRun("r1")).toEqual(posted);
    // Another instance took the run over: the old owner's fence is stale.
    const taken = await leases.acquire("r1", "B", 5000);
    expect(await leases.insertMessageIfCurrent("r1", fence, { ...answer, text: "stale" })).toBeUndefined();
    expect(await leases.insertMessageIfCurrent("r1", taken, { ...answer, text: "new owner" })).toBeDefined();
    // A finished run takes no more answers.
    await leases.updateFenced({ ...base, id: "r1", status: "done", endedAt: 3000 }, taken);
    expect(await leases.insertMessageIfCurrent("r1", taken, { ...answer, text: "after" })).toBeUndefined();
    expect((await store.messages.list("ops", { limit: 10 })).map((m) => m.text)).toEqual([
      "the answer",
      "new owner",
    ]);
  });
});
