import type { Socket } from "node:net";
import { describe, expect, it } from "vitest";
import type { ServerDeps } from "../../src/server/app.js";
import type { TeamEvent } from "../../src/team/types.js";
import { call, startServer, withUsers } from "./helpers.js";
import { connect, deltaText, FakeTeam, type Frame, isDelta, textDelta } from "./ws-helpers.js";

async function setUp(overrides: Partial<ServerDeps> = {}) {
  const team = new FakeTeam();
  const started = await startServer({ events: team, ...overrides });
  const { owner, users } = await withUsers(started.url, ["member"]);
  const member = users.member!;
  team.addChannel("general", [owner.userId, member.userId]);
  team.addChannel("secret", [owner.userId]);
  return { ...started, team, owner, member };
}

const isType = (type: string) => (f: Frame) => f.type === type;

describe("WebSocket authentication", () => {
  it("accepts the session cookie on a same-origin upgrade", async () => {
    const { url, host, member } = await setUp();
    const client = connect(url, { cookie: member.cookie, origin: `http://${host}` });
    const ready = await client.next(isType("ready"));
    expect(ready).toEqual({ type: "ready", user: { id: member.userId, role: "member" } });
    client.ws.close();
  });

  it("ignores the cookie on a cross-origin upgrade (closes 4401 without an auth frame)", async () => {
    const { url, member } = await setUp({ ws: { authTimeoutMs: 100 } });
    const client = connect(url, { cookie: member.cookie, origin: "https://evil.example" });
    const closed = await client.closed;
    expect(closed.code).toBe(4401);
    expect(client.frames.some((f) => f.type === "ready")).toBe(false);
  });

  it("accepts a session token in the first frame", async () => {
    const { url, member } = await setUp();
    const client = connect(url);
    await client.opened;
    client.send({ type: "auth", token: member.token });
    expect(await client.next(isType("ready"))).toMatchObject({ user: { id: member.userId } });
    client.send({ type: "ping" });
    await client.next(isType("pong"));
    client.ws.close();
  });

  it("handles frames sent right behind the auth frame after it, in order", async () => {
    const { url, member } = await setUp();
    const client = connect(url);
    await client.opened;
    // No waiting between them: the session lookup is still under way when the next frames arrive.
    client.send({ type: "auth", token: member.token });
    client.send({ type: "subscribe", channelId: "general" });
    client.send({ type: "ping" });
    await client.next(isType("pong"));
    expect(client.frames.map((f) => f.type)).toEqual(["ready", "backlog", "pong"]);
    expect(client.frames[1]).toMatchObject({ channelId: "general" });
    client.ws.close();
  });

  it("accepts a bearer session token on the upgrade (non-browser clients)", async () => {
    const { url, owner } = await setUp();
    const client = connect(url, { authorization: `Bearer ${owner.token}` });
    expect(await client.next(isType("ready"))).toMatchObject({ user: { id: owner.userId, role: "owner" } });
    client.ws.close();
  });

  it("closes with 4401 on a bad token, a non-auth first frame, or no frame in time", async () => {
    const { url } = await setUp({ ws: { authTimeoutMs: 100 } });
    const bad = connect(url);
    await bad.opened;
    bad.send({ type: "auth", token: "not-a-real-token" });
    expect((await bad.closed).code).toBe(4401);

    const early = connect(url);
    await early.opened;
    early.send({ type: "subscribe", channelId: "general" });
    expect((await early.closed).code).toBe(4401);

    const silent = connect(url);
    const closed = await silent.closed;
    expect(closed).toEqual({ code: 4401, reason: "authentication timeout" });
  });

  it("closes with 4401 once the session behind the socket is revoked", async () => {
    const { url, member } = await setUp({ ws: { heartbeatMs: 30 } });
    const client = connect(url, { cookie: member.cookie });
    await client.next(isType("ready"));
    expect((await call(url, "/api/auth/logout", { session: member, method: "POST" })).status).toBe(204);
    expect((await client.closed).code).toBe(4401);
  });
});

describe("WebSocket subscriptions", () => {
  it("answers a source failure with a generic error frame and logs it", async () => {
    const { url, member, team, log } = await setUp();
    team.getChannel = async () => {
      throw new Error("SQLITE_IOERR at /srv/secret/dimsum.db");
    };
    const client = connect(url, { cookie: member.cookie });
    await client.next(isType("ready"));
    client.send({ type: "subscribe", channelId: "general" });
    const error = await client.next(isType("error"));
    expect(error).toMatchObject({ channelId: "general", code: "internal" });
    expect(JSON.stringify(error)).not.toContain("secret");
    expect(log.lines.filter((l) => l.includes("SQLITE_IOERR"))).toHaveLength(1);
    client.ws.close();
  });

  it("refuses channels the source forbids, without closing, and sends none of their events", async () => {
    const { url, member, team } = await setUp();
    const client = connect(url, { cookie: member.cookie });
    await client.next(isType("ready"));
    client.send({ type: "subscribe", channelId: "secret" });
    const error = await client.next(isType("error"));
    expect(error).toMatchObject({ channelId: "secret", code: "forbidden" });
    client.send({ type: "subscribe", channelId: "missing" });
    expect(await client.next((f) => f.type === "error" && f.channelId === "missing")).toMatchObject({
      code: "not_found",
    });

    client.send({ type: "subscribe", channelId: "general" });
    await client.next(isType("backlog"));
    // Emit past the source's own filter to prove the hub filters by subscription too.
    const secretMessage = team.post("secret", "classified", false);
    team.emitToAll({ type: "message", channelId: "secret", message: secretMessage });
    team.post("general", "hello");
    const message = await client.next(isType("message"));
    expect(message).toMatchObject({ channelId: "general" });
    expect(JSON.stringify(client.frames)).not.toContain("classified");
    expect(client.ws.readyState).toBe(client.ws.OPEN);
    client.ws.close();
  });

  it("sends the backlog after `since`, then live events in order", async () => {
    const { url, member, team } = await setUp();
    for (let i = 1; i <= 5; i++) team.post("general", `m${i}`);
    const client = connect(url, { cookie: member.cookie });
    await client.next(isType("ready"));
    client.send({ type: "subscribe", channelId: "general", since: 3 });
    const backlog = await client.next(isType("backlog"));
    expect((backlog.messages as Array<{ text: string }>).map((m) => m.text)).toEqual(["m4", "m5"]);
    expect(team.listCalls.at(-1)?.options).toEqual({ after: 3 });

    for (let i = 0; i < 200; i++) {
      team.emit(textDelta("general", "r1", String(i)));
    }
    team.post("general", "m6");
    await client.next((f) => f.type === "message" && (f.message as { text: string }).text === "m6");
    const deltas = client.frames.filter(isDelta).map(deltaText);
    expect(deltas).toEqual(Array.from({ length: 200 }, (_, i) => String(i)));
    const types = client.frames.map((f) => f.type);
    expect(types.indexOf("backlog")).toBeLessThan(types.indexOf("agent"));
    client.ws.close();
  });

  it("loses and repeats nothing when events arrive while the backlog loads", async () => {
    const { url, member, team } = await setUp();
    team.post("general", "old");
    const client = connect(url, { cookie: member.cookie });
    await client.next(isType("ready"));
    let release = () => {};
    team.gate = new Promise((resolve) => {
      release = resolve;
    });
    client.send({ type: "subscribe", channelId: "general", since: 0 });
    while (team.listCalls.length === 0) await new Promise((r) => setImmediate(r));
    team.post("general", "during"); // stored before the query returns: in the backlog AND emitted live
    team.emit(textDelta("general", "r1", "streamed"));
    release();
    team.gate = undefined;
    const backlog = await client.next(isType("backlog"));
    expect((backlog.messages as Array<{ text: string }>).map((m) => m.text)).toEqual(["old", "during"]);
    team.post("general", "after");
    await client.next((f) => f.type === "message" && (f.message as { text: string }).text === "after");
    const texts = client.frames
      .filter((f) => f.type === "message")
      .map((f) => (f.message as { text: string }).text);
    expect(texts).toEqual(["after"]);
    expect(client.frames.filter(isDelta).map(deltaText)).toEqual(["streamed"]);
    client.ws.close();
  });

  it("stops a channel's events on unsubscribe and tells members about channels they join", async () => {
    const { url, member, team } = await setUp();
    const client = connect(url, { cookie: member.cookie });
    await client.next(isType("ready"));
    client.send({ type: "subscribe", channelId: "general" });
    await client.next(isType("backlog"));
    client.send({ type: "unsubscribe", channelId: "general" });
    client.send({ type: "ping" });
    await client.next(isType("pong"));
    team.post("general", "unheard");
    const joined = team.addChannel("new-group", ["x", member.userId]);
    team.emit({ type: "channel", channelId: "new-group", channel: joined });
    await client.next(isType("channel"));
    expect(client.frames.some((f) => f.type === "message")).toBe(false);
    client.ws.close();
  });

  it("watching: new messages and approval requests of every channel one may see, never their streams", async () => {
    const { url, member, team } = await setUp();
    team.addChannel("side", [member.userId]);
    const client = connect(url, { cookie: member.cookie });
    await client.next(isType("ready"));
    // Before a watch: nothing of channels not followed.
    team.post("side", "unwatched");
    client.send({ type: "watch" });
    client.send({ type: "ping" });
    await client.next(isType("pong"));
    const approval: TeamEvent = {
      type: "agent",
      channelId: "side",
      runId: "r9",
      seq: 1,
      event: {
        type: "approval",
        runId: "r9",
        callId: "c1",
        tool: "execute_command",
        args: {},
        summary: "ls",
        reason: "asks first",
        state: "requested",
      },
    };
    team.emit(textDelta("side", "r9", "streamed"));
    team.emit(approval);
    team.emit({ ...approval, seq: 2, event: { ...approval.event, state: "approved" } } as TeamEvent);
    // Past the source's filter: a channel the member may not see stays unheard.
    const secret = team.post("secret", "classified", false);
    team.emitToAll({ type: "message", channelId: "secret", message: secret });
    team.post("side", "watched");
    await client.next((f) => f.type === "message" && (f.message as { text: string }).text === "watched");
    const heard = client.frames.filter((f) => f.type === "message" || f.type === "agent");
    expect(
      heard.map((f) => (f.type === "message" ? (f.message as { text: string }).text : "approval")),
    ).toEqual(["approval", "watched"]);
    // A channel joined later is watched too.
    const joined = team.addChannel("later", ["x", member.userId]);
    team.emit({ type: "channel", channelId: "later", channel: joined });
    await client.next(isType("channel"));
    team.post("later", "in the new one");
    await client.next(
      (f) => f.type === "message" && (f.message as { text: string }).text === "in the new one",
    );
    expect(JSON.stringify(client.frames)).not.toContain("classified");
    expect(client.frames.some(isDelta)).toBe(false);
    client.ws.close();
  });

  it("answers bad frames with an error and keeps the connection", async () => {
    const { url, member } = await setUp();
    const client = connect(url, { cookie: member.cookie });
    await client.next(isType("ready"));
    client.send("not json");
    client.send({ type: "explode" });
    client.send({ type: "subscribe" });
    client.send({ type: "ping" });
    await client.next(isType("pong"));
    expect(client.frames.filter((f) => f.type === "error")).toHaveLength(3);
    client.ws.close();
  });
});

describe("WebSocket liveness and back-pressure", () => {
  it("pings clients and drops one that stops answering", async () => {
    const { url, member } = await setUp({ ws: { heartbeatMs: 30 } });
    const healthy = connect(url, { cookie: member.cookie });
    const mute = connect(url, { cookie: member.cookie }, { autoPong: false });
    await healthy.next(isType("ready"));
    await mute.next(isType("ready"));
    const closed = await mute.closed;
    expect(closed.code).toBe(1006);
    expect(mute.pings).toBeGreaterThanOrEqual(2);
    while (healthy.pings < 4) await new Promise((r) => setTimeout(r, 10));
    expect(healthy.ws.readyState).toBe(healthy.ws.OPEN);
    healthy.ws.close();
  });

  it("closes a slow client with 4408 while a fast one keeps receiving everything", async () => {
    const { url, member, team, server } = await setUp();
    const fast = connect(url, { cookie: member.cookie });
    const slow = connect(url, { cookie: member.cookie });
    for (const client of [fast, slow]) {
      await client.next(isType("ready"));
      client.send({ type: "subscribe", channelId: "general" });
      await client.next(isType("backlog"));
    }
    (slow.ws as unknown as { _socket: Socket })._socket.pause();

    const chunk = "x".repeat(256 * 1024);
    let sent = 0;
    // Pump batches until the hub gives up on the slow client (kernel buffers absorb the first MBs).
    while (server.hub.stats().droppedSlow === 0 && sent < 2000) {
      for (let i = 0; i < 8; i++) {
        const event: TeamEvent = textDelta("general", "big", `${sent}:${chunk}`);
        team.emit(event);
        sent++;
      }
      const last = sent - 1;
      await fast.next((f) => isDelta(f) && deltaText(f).startsWith(`${last}:`));
    }
    expect(server.hub.stats().droppedSlow).toBe(1);
    team.emit(textDelta("general", "big", "after-drop"));
    await fast.next((f) => isDelta(f) && deltaText(f) === "after-drop");
    const order = fast.frames.filter(isDelta).map((f) => Number(deltaText(f).split(":")[0]));
    expect(order.slice(0, sent)).toEqual(Array.from({ length: sent }, (_, i) => i));

    (slow.ws as unknown as { _socket: Socket })._socket.resume();
    const closed = await slow.closed;
    expect(closed).toEqual({ code: 4408, reason: "too slow" });
    expect(fast.ws.readyState).toBe(fast.ws.OPEN);
    fast.ws.close();
  });

  it("releases the team subscription when a socket closes", async () => {
    const { url, member, team } = await setUp();
    const client = connect(url, { cookie: member.cookie });
    await client.next(isType("ready"));
    expect(team.listenerCount).toBe(1);
    client.ws.close();
    await client.closed;
    while (team.listenerCount > 0) await new Promise((r) => setTimeout(r, 10));
    expect(team.listenerCount).toBe(0);
  });
});
