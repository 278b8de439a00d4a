/**
 * Socket rights follow the session: a role change, logout, session revocation, password change or
 * account deletion acts on open WebSockets at once (an auth event, not the 25 s heartbeat). Real
 * server with the real team on 127.0.0.1, real `ws` clients.
 */
import { describe, expect, it } from "vitest";
import { UserStore } from "../../src/server/auth/user-store.js";
import type { ChannelMessage, ChannelRecord } from "../../src/team/types.js";
import { call, login, type Session, startServer, waitFor, withUsers } from "./helpers.js";
import { expectJson, flush, follow, openSocket, startTeamServer, type TeamServer } from "./team-helpers.js";
import { connect, FakeTeam, type Frame, type TestClient } from "./ws-helpers.js";

/** The socket's close, or a failure when it is still open after a second. */
function closedSoon(client: TestClient): Promise<{ code: number; reason: string }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("the socket was still open 1 s after the auth event")), 1000);
  });
  return Promise.race([client.closed, timeout]).finally(() => clearTimeout(timer));
}

async function channel(s: TeamServer, session: Session, name: string, userIds: string[] = []) {
  return expectJson<ChannelRecord>(
    await call(s.url, "/api/channels", { session, body: { kind: "group", name, userIds } }),
    201,
  );
}

async function post(s: TeamServer, session: Session, channelId: string, text: string): Promise<void> {
  await expectJson(
    await call(s.url, `/api/channels/${channelId}/messages`, { session, body: { text } }),
    201,
  );
}

const textOf = (f: Frame) => (f.type === "message" ? (f.message as ChannelMessage).text : undefined);

async function sessionId(s: TeamServer, session: Session): Promise<string> {
  const list = await expectJson<Array<{ id: string; current: boolean }>>(
    await call(s.url, "/api/auth/sessions", { session }),
    200,
  );
  const own = list.find((x) => x.current);
  if (!own) throw new Error("no current session");
  return own.id;
}

async function setUp() {
  const s = await startTeamServer();
  const { owner, users } = await withUsers(s.url, ["admin", "member"]);
  return { s, owner, admin: users.admin!, member: users.member! };
}

describe("a role change re-authorises the socket", () => {
  it("an admin demoted to member loses a private channel at once, keeps his own", async () => {
    const { s, owner, admin, member } = await setUp();
    const privateChat = await channel(s, member, "Bob's private notes");
    const shared = await channel(s, owner, "Shared", [admin.userId]);

    const socket = await openSocket(s, admin);
    await follow(socket, privateChat.id);
    await follow(socket, shared.id);
    await post(s, member, privateChat.id, "before demotion");
    await socket.next((f) => textOf(f) === "before demotion");

    await expectJson(
      await call(s.url, `/api/users/${admin.userId}`, {
        session: owner,
        method: "PATCH",
        body: { role: "member" },
      }),
      200,
    );
    const demotedAt = socket.frames.length;
    const reauthorized = await socket.next((f) => f.type === "reauthorized");
    expect(reauthorized).toEqual({ type: "reauthorized", user: { id: admin.userId, role: "member" } });
    const dropped = await socket.next((f) => f.type === "unsubscribed");
    expect(dropped).toMatchObject({ channelId: privateChat.id, code: "not_found" });
    expect(String(dropped.message)).not.toContain("Bob");

    await post(s, member, privateChat.id, "after demotion");
    await post(s, owner, shared.id, "shared news");
    await socket.next((f) => textOf(f) === "shared news");
    // Subscribing again is refused now, without naming the channel.
    socket.send({ type: "subscribe", channelId: privateChat.id });
    const refused = await socket.next((f) => f.type === "error" && f.channelId === privateChat.id);
    expect(refused.code).toBe("not_found");
    await flush(socket);

    const afterwards = socket.frames.slice(demotedAt);
    expect(afterwards.filter((f) => f.channelId === privateChat.id).map((f) => f.type)).toEqual([
      "unsubscribed",
      "error",
    ]);
    expect(JSON.stringify(socket.frames)).not.toContain("after demotion");
    expect(JSON.stringify(afterwards)).not.toContain("Bob's private notes");
    expect(socket.ws.readyState).toBe(socket.ws.OPEN);
    socket.ws.close();
  });

  it("a member promoted to admin may follow any channel without reconnecting", async () => {
    const { s, owner, admin, member } = await setUp();
    const adminOnly = await channel(s, admin, "Admins");
    const socket = await openSocket(s, member);
    socket.send({ type: "subscribe", channelId: adminOnly.id });
    await socket.next((f) => f.type === "error" && f.channelId === adminOnly.id);

    await call(s.url, `/api/users/${member.userId}`, {
      session: owner,
      method: "PATCH",
      body: { role: "admin" },
    });
    await socket.next((f) => f.type === "reauthorized");
    await follow(socket, adminOnly.id);
    await post(s, admin, adminOnly.id, "welcome");
    await socket.next((f) => textOf(f) === "welcome");
    socket.ws.close();
  });
});

describe("ending the session closes its sockets at once", () => {
  it("logout closes that session's socket and no other", async () => {
    const { s, member } = await setUp();
    const other = await login(s.url, "member-user", "member-password-1");
    const socket = await openSocket(s, member);
    const otherSocket = await openSocket(s, other);
    expect((await call(s.url, "/api/auth/logout", { session: member, method: "POST" })).status).toBe(204);
    expect(await closedSoon(socket)).toEqual({ code: 4401, reason: "signed out" });
    await flush(otherSocket);
    expect(otherSocket.ws.readyState).toBe(otherSocket.ws.OPEN);
    otherSocket.ws.close();
  });

  it("logout everywhere closes every socket of the account, bearer-authenticated ones too", async () => {
    const { s, member } = await setUp();
    const other = await login(s.url, "member-user", "member-password-1");
    const cookieSocket = await openSocket(s, member);
    const tokenSocket = connect(s.url);
    await tokenSocket.opened;
    tokenSocket.send({ type: "auth", token: other.token });
    await tokenSocket.next((f) => f.type === "ready");
    expect((await call(s.url, "/api/auth/logout-all", { session: member, method: "POST" })).status).toBe(204);
    expect((await closedSoon(cookieSocket)).code).toBe(4401);
    expect((await closedSoon(tokenSocket)).code).toBe(4401);
  });

  it("revoking a session from another closes the revoked session's socket", async () => {
    const { s, owner, member } = await setUp();
    const laptop = await login(s.url, "member-user", "member-password-1");
    const room = await channel(s, owner, "Room", [member.userId]);
    const socket = await openSocket(s, laptop);
    const keep = await openSocket(s, member);
    await follow(socket, room.id);
    const id = await sessionId(s, laptop);
    expect(
      (await call(s.url, `/api/auth/sessions/${id}`, { session: member, method: "DELETE" })).status,
    ).toBe(204);
    expect(await closedSoon(socket)).toEqual({ code: 4401, reason: "session revoked" });
    await post(s, owner, room.id, "after revocation");
    expect(socket.frames.some((f) => textOf(f) === "after revocation")).toBe(false);
    await flush(keep);
    keep.ws.close();
  });

  it("a password change closes the account's other sockets and keeps the caller's", async () => {
    const { s, member } = await setUp();
    const phone = await login(s.url, "member-user", "member-password-1");
    const phoneSocket = await openSocket(s, phone);
    const ownSocket = await openSocket(s, member);
    const res = await call(s.url, "/api/auth/password", {
      session: member,
      body: { currentPassword: "member-password-1", newPassword: "member-password-2" },
    });
    expect(res.status).toBe(204);
    expect(await closedSoon(phoneSocket)).toEqual({ code: 4401, reason: "password changed" });
    await flush(ownSocket);
    expect(ownSocket.ws.readyState).toBe(ownSocket.ws.OPEN);
    ownSocket.ws.close();
  });

  it("a password reset by an admin closes every socket of the account", async () => {
    const { s, owner, member } = await setUp();
    const socket = await openSocket(s, member);
    await expectJson(
      await call(s.url, `/api/users/${member.userId}`, {
        session: owner,
        method: "PATCH",
        body: { password: "reset-password-9" },
      }),
      200,
    );
    expect(await closedSoon(socket)).toEqual({ code: 4401, reason: "password changed" });
  });

  it("deleting the account closes its sockets, and its private frames stop", async () => {
    const { s, owner, member } = await setUp();
    const room = await channel(s, owner, "Room", [member.userId]);
    const socket = await openSocket(s, member);
    await follow(socket, room.id);
    expect(
      (await call(s.url, `/api/users/${member.userId}`, { session: owner, method: "DELETE" })).status,
    ).toBe(204);
    expect(await closedSoon(socket)).toEqual({ code: 4401, reason: "account deleted" });
    await post(s, owner, room.id, "after deletion");
    expect(socket.frames.some((f) => textOf(f) === "after deletion")).toBe(false);
  });
});

describe("disabling an account", () => {
  it("ends its sessions, sockets and API tokens, refuses its sign-in, and enabling lets it back", async () => {
    const { s, owner, admin, member } = await setUp();
    const socket = await openSocket(s, member);
    const token = await expectJson<{ token: string }>(
      await call(s.url, "/api/tokens", { session: member, body: { name: "script" } }),
      201,
    );
    const disable = (session: Session, userId: string, disabled: boolean) =>
      call(s.url, `/api/users/${userId}`, { session, method: "PATCH", body: { disabled } });

    expect((await disable(admin, admin.userId, true)).status).toBe(409);
    const disabled = await expectJson<{ disabled: boolean }>(await disable(owner, member.userId, true), 200);
    expect(disabled.disabled).toBe(true);
    expect(await closedSoon(socket)).toEqual({ code: 4401, reason: "account disabled" });
    expect((await call(s.url, "/api/auth/me", { session: member })).status).toBe(401);
    const byToken = await fetch(`${s.url}/v1/models`, {
      headers: { authorization: `Bearer ${token.token}` },
    });
    expect(byToken.status).toBe(401);
    const refused = await call(s.url, "/api/auth/login", {
      body: { username: "member-user", password: "member-password-1" },
    });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/disabled/);
    const listed = await expectJson<Array<{ id: string; disabled: boolean }>>(
      await call(s.url, "/api/users", { session: owner }),
      200,
    );
    expect(listed.find((u) => u.id === member.userId)?.disabled).toBe(true);

    await expectJson(await disable(owner, member.userId, false), 200);
    const back = await login(s.url, "member-user", "member-password-1");
    expect((await call(s.url, "/api/auth/me", { session: back })).status).toBe(200);
  });
});

describe("a role change with an in-memory event source", () => {
  async function fakeSetUp() {
    const team = new FakeTeam();
    const started = await startServer({ events: team });
    const { owner, users } = await withUsers(started.url, ["admin"]);
    const admin = users.admin!;
    team.addChannel("secret", [owner.userId]);
    team.addChannel("staff", [owner.userId, admin.userId]);
    const demote = async () =>
      expect(
        (
          await call(started.url, `/api/users/${admin.userId}`, {
            session: owner,
            method: "PATCH",
            body: { role: "member" },
          })
        ).status,
      ).toBe(200);
    return { ...started, team, owner, admin, demote };
  }

  it("holds a subscription's events from the role change until it is checked again", async () => {
    const { url, team, admin, demote } = await fakeSetUp();
    const socket = connect(url, { cookie: admin.cookie });
    await socket.next((f) => f.type === "ready");
    await follow(socket, "secret");
    await follow(socket, "staff");
    let release = () => {};
    team.channelGate = new Promise<void>((resolve) => {
      release = resolve;
    });
    await demote();
    await socket.next((f) => f.type === "reauthorized");
    // While the check waits, an event past the source's own filter: the hub must not pass it on.
    const leaked = team.post("secret", "right after the change", false);
    team.emitToAll({ type: "message", channelId: "secret", message: leaked });
    team.channelGate = undefined;
    release();
    await socket.next((f) => f.type === "unsubscribed" && f.channelId === "secret");
    team.post("staff", "staff news");
    await socket.next((f) => textOf(f) === "staff news");
    await flush(socket);
    expect(JSON.stringify(socket.frames)).not.toContain("right after the change");
    socket.ws.close();
  });

  it("a subscription loading while the role changes is checked with the new rights", async () => {
    const { url, team, admin, demote } = await fakeSetUp();
    team.post("secret", "old secret");
    const socket = connect(url, { cookie: admin.cookie });
    await socket.next((f) => f.type === "ready");
    let release = () => {};
    team.gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    socket.send({ type: "subscribe", channelId: "secret" });
    await waitFor(() => (team.listCalls.length > 0 ? true : undefined));
    await demote();
    await socket.next((f) => f.type === "reauthorized");
    team.gate = undefined;
    release();
    const refused = await socket.next((f) => f.type === "error" && f.channelId === "secret");
    expect(refused.code).toBe("forbidden");
    await flush(socket);
    expect(socket.frames.some((f) => f.type === "backlog")).toBe(false);
    expect(JSON.stringify(socket.frames)).not.toContain("old secret");
    socket.ws.close();
  });
});

describe("the heartbeat as a fallback", () => {
  it("re-reads the role, so a change written around the auth events still applies", async () => {
    const team = new FakeTeam();
    const { url, db } = await startServer({ events: team, ws: { heartbeatMs: 30 } });
    const { owner, users } = await withUsers(url, ["admin"]);
    const admin = users.admin!;
    team.addChannel("secret", [owner.userId]);
    const socket = connect(url, { cookie: admin.cookie });
    await socket.next((f) => f.type === "ready");
    await follow(socket, "secret");
    // Another process sharing the database: no auth event reaches this server.
    await new UserStore(db, { hashParams: { N: 1024, r: 8, p: 1 } }).update(admin.userId, { role: "member" });
    expect(await socket.next((f) => f.type === "reauthorized")).toMatchObject({ user: { role: "member" } });
    await socket.next((f) => f.type === "unsubscribed" && f.channelId === "secret");
    socket.ws.close();
  });
});
