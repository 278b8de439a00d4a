import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ChannelRecord, TeamEvent } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { AgentScripts, alice, bob, guest, owner, TeamHarness } from "./harness.js";

let server: FakeLlmServer;
const scripts = new AgentScripts();
let h: TeamHarness;
let secret: ChannelRecord;
let open: ChannelRecord;

beforeAll(async () => {
  server = await startFakeLlmServer({ defaultTurn: scripts.turn });
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  server.reset();
  scripts.clear();
  h = new TeamHarness(server);
  // alice alone (with an agent) in "secret"; alice, bob and the guest in "open".
  secret = await h.team.createChannel(alice, {
    kind: "group",
    name: "Secret",
    agentIds: ["coder"],
    userIds: [],
  });
  open = await h.team.createChannel(alice, {
    kind: "group",
    name: "Open",
    leaderAgentId: "assistant",
    agentIds: ["assistant"],
    userIds: ["bob", "gus"],
  });
});
afterEach(async () => {
  await h.close();
});

describe("access", () => {
  it("keeps members out of channels they do not belong to", async () => {
    // A channel (and its runs and messages) the caller may not see answers as if it did not exist.
    const hidden = { code: "not_found" };
    await expect(h.team.getChannel(bob, secret.id)).rejects.toMatchObject(hidden);
    await expect(h.team.listMessages(bob, secret.id)).rejects.toMatchObject(hidden);
    await expect(h.team.postMessage(bob, secret.id, "let me in")).rejects.toMatchObject(hidden);
    await expect(h.team.addMember(bob, secret.id, { type: "user", id: "bob" })).rejects.toMatchObject(hidden);
    await expect(h.team.setChain(bob, secret.id, [])).rejects.toMatchObject(hidden);
    await expect(h.team.markRead(bob, secret.id, 1)).rejects.toMatchObject(hidden);
    await expect(h.team.searchMessages(bob, "anything", { channelId: secret.id })).rejects.toMatchObject(
      hidden,
    );
    await expect(h.team.getChannel(bob, "ch_missing")).rejects.toMatchObject({
      code: "not_found",
    });
    expect((await h.team.listChannels(bob)).map((c) => c.name)).toEqual(["Open"]);
    expect((await h.team.listChannels(owner)).map((c) => c.name)).toEqual(["Secret", "Open"]);

    const { runs } = await h.team.postMessage(alice, secret.id, "@coder private work");
    await h.finished(runs[0]!.id);
    await expect(h.team.getRun(bob, runs[0]!.id)).rejects.toMatchObject(hidden);
    await expect(h.team.cancelRun(bob, runs[0]!.id)).rejects.toMatchObject(hidden);
    await expect(h.team.getRunTrace(bob, runs[0]!.id)).rejects.toMatchObject(hidden);
    const [mine] = await h.team.listMessages(alice, secret.id);
    await expect(h.team.deleteMessage(bob, mine!.id)).rejects.toMatchObject(hidden);
  });

  it("lets guests only read and post where invited", async () => {
    const forbidden = { code: "forbidden" };
    await expect(
      h.team.createChannel(guest, { kind: "group", name: "Mine", agentIds: [], userIds: [] }),
    ).rejects.toMatchObject(forbidden);
    await expect(h.team.getChannel(guest, secret.id)).rejects.toMatchObject({ code: "not_found" });
    await expect(h.team.updateChannel(guest, open.id, { name: "Renamed" })).rejects.toMatchObject(forbidden);
    await expect(h.team.addMember(guest, open.id, { type: "agent", id: "coder" })).rejects.toMatchObject(
      forbidden,
    );
    await expect(h.team.removeMember(guest, open.id, { type: "user", id: "bob" })).rejects.toMatchObject(
      forbidden,
    );
    await expect(h.team.getSoul(guest, "coder")).rejects.toMatchObject(forbidden);
    await expect(h.team.complete(guest, "coder", [{ role: "user", content: "hi" }])).rejects.toMatchObject(
      forbidden,
    );

    const posted = await h.team.postMessage(guest, open.id, "hello from a guest");
    await h.finished(posted.runs[0]!.id);
    expect((await h.team.listMessages(guest, open.id)).map((m) => m.text)).toEqual([
      "hello from a guest",
      "answer from @assistant",
    ]);
  });

  it("lets a member create channels and manage the ones they belong to", async () => {
    const mine = await h.team.createChannel(bob, {
      kind: "group",
      name: "Bob's",
      agentIds: ["writer"],
      userIds: [],
    });
    expect(mine.members).toContainEqual({ type: "user", id: "bob" });
    await h.team.addMember(bob, mine.id, { type: "agent", id: "editor" });
    const renamed = await h.team.updateChannel(bob, mine.id, { name: "Bob's room", leaderAgentId: "editor" });
    expect(renamed).toMatchObject({ name: "Bob's room", leaderAgentId: "editor" });
    await expect(h.team.deleteChannel(alice, mine.id)).rejects.toMatchObject({ code: "not_found" });
    await h.team.addMember(bob, mine.id, { type: "user", id: "alice" });
    await expect(h.team.deleteChannel(alice, mine.id)).rejects.toMatchObject({ code: "forbidden" });
    await h.team.deleteChannel(bob, mine.id);
    await expect(h.team.getChannel(owner, mine.id)).rejects.toMatchObject({ code: "not_found" });
  });

  it("delivers events only for channels the subscriber may see", async () => {
    const seen = (events: TeamEvent[]) => [...new Set(events.map((e) => e.channelId))].sort();
    const bobEvents: TeamEvent[] = [];
    const guestEvents: TeamEvent[] = [];
    const adminEvents: TeamEvent[] = [];
    h.team.subscribe(bob, (e) => bobEvents.push(e));
    h.team.subscribe(guest, (e) => guestEvents.push(e));
    const stop = h.team.subscribe({ userId: "ann", role: "admin" }, (e) => adminEvents.push(e));

    const a = await h.team.postMessage(alice, secret.id, "@coder secret");
    const b = await h.team.postMessage(alice, open.id, "public");
    await Promise.all([...a.runs, ...b.runs].map((r) => h.finished(r.id)));
    expect(seen(bobEvents)).toEqual([open.id]);
    expect(seen(guestEvents)).toEqual([open.id]);
    expect(seen(adminEvents)).toEqual([open.id, secret.id].sort());
    expect(bobEvents.some((e) => e.type === "agent" && e.event.type === "text_delta")).toBe(true);

    // Adding bob to the secret channel lets him see it from then on; removing him stops it.
    await h.team.addMember(alice, secret.id, { type: "user", id: "bob" });
    const c = await h.team.postMessage(alice, secret.id, "@coder now bob is here");
    await h.finished(c.runs[0]!.id);
    expect(bobEvents.some((e) => e.type === "message" && e.message.text === "@coder now bob is here")).toBe(
      true,
    );
    await h.team.removeMember(alice, secret.id, { type: "user", id: "bob" });
    const before = bobEvents.length;
    stop();
    const d = await h.team.postMessage(alice, secret.id, "@coder bob left");
    await h.finished(d.runs[0]!.id);
    expect(bobEvents.length).toBe(before);
    expect(adminEvents.some((e) => e.type === "message" && e.message.text === "@coder bob left")).toBe(false);
  });
});

describe("search and unread counts", () => {
  it("finds messages by words and by Chinese text, only in visible channels", async () => {
    await h.team.postMessage(alice, open.id, "@bob the deployment pipeline is green");
    await h.team.postMessage(alice, open.id, "@bob 我们明天讨论数据库迁移的方案");
    await h.team.postMessage(alice, secret.id, "@alice deployment secrets live here, 数据库密码");

    const byWord = await h.team.searchMessages(bob, "deploy");
    expect(byWord.map((m) => m.text)).toEqual(["@bob the deployment pipeline is green"]);
    const byChinese = await h.team.searchMessages(bob, "数据库");
    expect(byChinese.map((m) => m.text)).toEqual(["@bob 我们明天讨论数据库迁移的方案"]);
    expect((await h.team.searchMessages(bob, "迁移方案")).length).toBe(0);
    expect((await h.team.searchMessages(bob, "迁移")).length).toBe(1);
    expect((await h.team.searchMessages(owner, "数据库")).length).toBe(2);
    expect(
      (await h.team.searchMessages(alice, "deployment", { channelId: secret.id })).map((m) => m.channelId),
    ).toEqual([secret.id]);
    expect(await h.team.searchMessages(bob, "  ...  ")).toEqual([]);

    const [hit] = byChinese;
    await h.team.deleteMessage(alice, hit!.id);
    expect(await h.team.searchMessages(bob, "数据库")).toEqual([]);
    expect(h.events).toContainEqual({ type: "message_deleted", channelId: open.id, messageId: hit!.id });
  });

  it("counts unread messages per person until they mark the channel read", async () => {
    await h.team.postMessage(alice, open.id, "@bob one");
    const two = await h.team.postMessage(alice, open.id, "@bob two");
    const unread = async (who: typeof bob) =>
      Object.fromEntries((await h.team.listChannels(who)).map((c) => [c.name, c.unread]));
    expect(await unread(bob)).toEqual({ Open: 2 });
    expect(await unread(alice)).toEqual({ Secret: 0, Open: 0 });
    await h.team.markRead(bob, open.id, two.message.id);
    expect(await unread(bob)).toEqual({ Open: 0 });
    await h.team.postMessage(alice, open.id, "@bob three");
    expect(await unread(bob)).toEqual({ Open: 1 });
  });

  it("pages messages with before and after", async () => {
    const ids: number[] = [];
    for (const text of ["@bob a", "@bob b", "@bob c", "@bob d"]) {
      ids.push((await h.team.postMessage(alice, open.id, text)).message.id);
    }
    const texts = async (options: { before?: number; after?: number; limit?: number }) =>
      (await h.team.listMessages(bob, open.id, options)).map((m) => m.text.slice(5));
    expect(await texts({ limit: 2 })).toEqual(["c", "d"]);
    expect(await texts({ before: ids[2], limit: 5 })).toEqual(["a", "b"]);
    expect(await texts({ after: ids[0], limit: 2 })).toEqual(["b", "c"]);
  });
});

describe("complete (OpenAI-compatible endpoint)", () => {
  it("runs an agent over the given conversation and streams its text", async () => {
    scripts.add("translator", { text: "你好，世界" });
    const deltas: string[] = [];
    const result = await h.team.complete(
      alice,
      "translator",
      [
        { role: "system", content: "Answer in Chinese." },
        { role: "user", content: "Say hi" },
        { role: "assistant", content: "Hi!" },
        { role: "user", content: "Hello, world" },
      ],
      { onDelta: (t) => deltas.push(t) },
    );
    expect(result.text).toBe("你好，世界");
    expect(deltas.join("")).toBe("你好，世界");
    expect(result.usage?.outputTokens).toBeGreaterThan(0);
    const request = server.requests.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> };
    expect(request.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(String(request.messages[0]?.content)).toContain("Answer in Chinese.");
    expect(String(request.messages[0]?.content)).toContain("# Translator");
    // Channel-less runs reach no subscriber, but their owner can read them.
    expect(h.events.some((e) => e.type === "run" && e.run.id === result.runId)).toBe(false);
    expect(await h.team.getRun(alice, result.runId)).toMatchObject({ status: "done", channelId: "" });
    await expect(h.team.getRun(bob, result.runId)).rejects.toMatchObject({ code: "not_found" });
  });

  it("reports model failures and unknown agents", async () => {
    scripts.add("coder", { error: { status: 401 } });
    await expect(h.team.complete(alice, "coder", [{ role: "user", content: "hi" }])).rejects.toMatchObject({
      code: "auth",
    });
    await expect(h.team.complete(alice, "nobody", [{ role: "user", content: "hi" }])).rejects.toMatchObject({
      code: "not_found",
    });
    await expect(
      h.team.complete(alice, "coder", [{ role: "assistant", content: "hi" }]),
    ).rejects.toMatchObject({
      code: "invalid",
    });
    await expect(h.team.complete(alice, "coder", [{ role: "user", content: " " }])).rejects.toMatchObject({
      code: "invalid",
      message: "The last user message is empty; send some text.",
    });
  });
});
