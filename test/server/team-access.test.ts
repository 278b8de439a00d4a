/**
 * Who may see and do what, proven over HTTP and WebSocket: members only in their channels, guests only
 * where invited and never managing, agents managed by admins only; no session → 401, no CSRF → 403.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChannelMessage, ChannelRecord, FlowRecord, PostResult } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { AgentScripts } from "../team/harness.js";
import { call, type Session, withUsers } from "./helpers.js";
import {
  expectJson,
  flush,
  follow,
  openSocket,
  runFrame,
  startTeamServer,
  type TeamServer,
} from "./team-helpers.js";
import { connect } from "./ws-helpers.js";

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
  member: Session;
  guest: Session;
  /** Owner's group the member and guest are not in, with a finished run and a paused flow. */
  secret: ChannelRecord;
  secretMessage: ChannelMessage;
  secretRunId: string;
  secretFlow: FlowRecord;
  /** Member's group with the guest invited. */
  open: ChannelRecord;
}

async function world(): Promise<World> {
  const s = await startTeamServer({ llmUrl: llm.url });
  const { owner, users } = await withUsers(s.url, ["member", "guest"]);
  const member = users.member!;
  const guest = users.guest!;
  const secret = await expectJson<ChannelRecord>(
    await call(s.url, "/api/channels", {
      session: owner,
      body: { kind: "group", name: "Secret", agentIds: ["assistant", "writer", "editor"], userIds: [] },
    }),
    201,
  );
  await call(s.url, `/api/channels/${secret.id}/chain`, {
    session: owner,
    method: "PUT",
    body: { steps: [{ agentId: "writer", requiresApproval: true }, { agentId: "editor" }] },
  });
  const socket = await openSocket(s, owner);
  await follow(socket, secret.id);
  const asked = await expectJson<PostResult>(
    await call(s.url, `/api/channels/${secret.id}/messages`, {
      session: owner,
      body: { text: "@assistant secret dumplings recipe" },
    }),
    201,
  );
  const secretRunId = asked.runs[0]!.id;
  await socket.next(runFrame(secretRunId, "done"));
  const flowed = await expectJson<PostResult>(
    await call(s.url, `/api/channels/${secret.id}/messages`, {
      session: owner,
      body: { text: "/flow plan" },
    }),
    201,
  );
  const flowId = flowed.flow!.id;
  await socket.next(
    (f) =>
      f.type === "flow" && (f.flow as FlowRecord).id === flowId && (f.flow as FlowRecord).status === "paused",
  );
  socket.ws.close();
  const open = await expectJson<ChannelRecord>(
    await call(s.url, "/api/channels", {
      session: member,
      body: { kind: "group", name: "Open", agentIds: ["assistant"], userIds: [guest.userId] },
    }),
    201,
  );
  await call(s.url, `/api/channels/${open.id}/messages`, {
    session: member,
    body: { text: "dumplings for everyone" },
  });
  return {
    s,
    owner,
    member,
    guest,
    secret,
    secretMessage: asked.message,
    secretRunId,
    secretFlow: flowed.flow!,
    open,
  };
}

const statusOf = async (res: Promise<Response>) => (await res).status;

describe("access over HTTP", () => {
  it("keeps a member out of a channel they do not belong to", async () => {
    const w = await world();
    const { s, member, secret } = w;
    const as = (path: string, options: Parameters<typeof call>[2] = {}) =>
      statusOf(call(s.url, path, { session: member, ...options }));

    const channels = await expectJson<ChannelRecord[]>(
      await call(s.url, "/api/channels", { session: member }),
      200,
    );
    expect(channels.map((c) => c.id)).toEqual([w.open.id]);
    expect(await as(`/api/channels/${secret.id}`)).toBe(404);
    expect(await as(`/api/channels/${secret.id}/messages`)).toBe(404);
    expect(await as(`/api/channels/${secret.id}/messages`, { body: { text: "let me in" } })).toBe(404);
    expect(await as(`/api/channels/${secret.id}/read`, { body: { messageId: w.secretMessage.id } })).toBe(
      404,
    );
    expect(
      await as(`/api/channels/${secret.id}/members`, { body: { type: "user", id: member.userId } }),
    ).toBe(404);
    expect(await as(`/api/channels/${secret.id}/members/agent/assistant`, { method: "DELETE" })).toBe(404);
    expect(
      await as(`/api/channels/${secret.id}/chain`, {
        method: "PUT",
        body: { steps: [{ agentId: "assistant" }] },
      }),
    ).toBe(404);
    expect(await as(`/api/channels/${secret.id}`, { method: "PATCH", body: { name: "Mine now" } })).toBe(404);
    expect(await as(`/api/channels/${secret.id}`, { method: "DELETE" })).toBe(404);
    expect(await as(`/api/messages/${w.secretMessage.id}`, { method: "DELETE" })).toBe(404);
    expect(await as(`/api/runs/${w.secretRunId}`)).toBe(404);
    expect(await as(`/api/runs/${w.secretRunId}/cancel`, { method: "POST" })).toBe(404);
    expect(await as(`/api/runs/${w.secretRunId}/trace`)).toBe(404);
    expect(await as(`/api/flows/${w.secretFlow.id}`)).toBe(404);
    expect(await as(`/api/flows/${w.secretFlow.id}/actions`, { body: { action: "stop" } })).toBe(404);
    expect(await as(`/api/search?q=dumpling&channelId=${secret.id}`)).toBe(404);
    // The answer is the same as for a channel that does not exist, and names nothing.
    const refused = await call(s.url, `/api/channels/${secret.id}`, { session: member });
    const missing = await call(s.url, "/api/channels/ch_does_not_exist", { session: member });
    const refusedBody = await refused.text();
    expect(refusedBody).toBe(await missing.text());
    expect(refusedBody).not.toContain("Secret");

    // Search across channels finds only the member's own channel.
    const found = await expectJson<ChannelMessage[]>(
      await call(s.url, "/api/search?q=dumplings", { session: member }),
      200,
    );
    expect(found.map((m) => m.channelId)).toEqual([w.open.id]);
    const all = await expectJson<ChannelMessage[]>(
      await call(s.url, "/api/search?q=dumplings", { session: w.owner }),
      200,
    );
    expect(new Set(all.map((m) => m.channelId))).toEqual(new Set([w.open.id, secret.id]));

    // Nothing changed: the channel, its members and the flow are as they were.
    const after = await expectJson<ChannelRecord>(
      await call(s.url, `/api/channels/${secret.id}`, { session: w.owner }),
      200,
    );
    const sorted = (c: ChannelRecord) => c.members.map((m) => `${m.type}:${m.id}`).sort();
    expect(sorted(after)).toEqual(sorted(secret));
    expect(after.name).toBe("Secret");

    // Invited, the member gets in; removed again, they are out again.
    const added = await expectJson<ChannelRecord>(
      await call(s.url, `/api/channels/${secret.id}/members`, {
        session: w.owner,
        body: { type: "user", id: member.userId },
      }),
      200,
    );
    expect(added.members).toContainEqual({ type: "user", id: member.userId });
    expect(await as(`/api/channels/${secret.id}/messages`)).toBe(200);
    const removed = await expectJson<ChannelRecord>(
      await call(s.url, `/api/channels/${secret.id}/members/user/${member.userId}`, {
        session: w.owner,
        method: "DELETE",
      }),
      200,
    );
    expect(removed.members).not.toContainEqual({ type: "user", id: member.userId });
    expect(await as(`/api/channels/${secret.id}/messages`)).toBe(404);
    const flow = await expectJson<FlowRecord>(
      await call(s.url, `/api/flows/${w.secretFlow.id}`, { session: w.owner }),
      200,
    );
    expect(flow.status).toBe("paused");
  });

  it("lets a guest read and write only where invited, and never create or manage", async () => {
    const w = await world();
    const { s, guest } = w;
    const as = (path: string, options: Parameters<typeof call>[2] = {}) =>
      statusOf(call(s.url, path, { session: guest, ...options }));

    expect(
      await as("/api/channels", {
        body: { kind: "group", name: "Mine", agentIds: ["assistant"], userIds: [] },
      }),
    ).toBe(403);
    expect(await as("/api/agents", { body: { id: "spy", name: "Spy" } })).toBe(403);
    const channels = await expectJson<ChannelRecord[]>(
      await call(s.url, "/api/channels", { session: guest }),
      200,
    );
    expect(channels.map((c) => c.id)).toEqual([w.open.id]);

    expect(await as(`/api/channels/${w.open.id}/messages`)).toBe(200);
    expect(await as(`/api/channels/${w.open.id}/messages`, { body: { text: "hello from the guest" } })).toBe(
      201,
    );
    expect(await as(`/api/channels/${w.secret.id}/messages`)).toBe(404);
    expect(await as(`/api/channels/${w.secret.id}/messages`, { body: { text: "hello?" } })).toBe(404);
    expect(
      await as(`/api/channels/${w.open.id}/chain`, {
        method: "PUT",
        body: { steps: [{ agentId: "assistant" }] },
      }),
    ).toBe(403);
    expect(await as(`/api/channels/${w.open.id}/members`, { body: { type: "agent", id: "writer" } })).toBe(
      403,
    );
    expect(await as("/api/agents/assistant/soul")).toBe(403);
    expect(await as(`/api/flows/${w.secretFlow.id}/actions`, { body: { action: "stop" } })).toBe(404);
  });

  it("lets only owners and admins manage agents", async () => {
    const w = await world();
    const { s, member } = w;
    const as = (path: string, options: Parameters<typeof call>[2] = {}) =>
      statusOf(call(s.url, path, { session: member, ...options }));
    expect(await as("/api/agents")).toBe(200);
    expect(await as("/api/agents/assistant/soul")).toBe(200);
    expect(await as("/api/agents/assistant/soul", { method: "PUT", body: { content: "# Evil" } })).toBe(403);
    expect(await as("/api/agents/assistant", { method: "PATCH", body: { name: "Renamed" } })).toBe(403);
    expect(await as("/api/agents/assistant", { method: "DELETE" })).toBe(403);
    expect(await as("/api/agents", { body: { id: "mine", name: "Mine" } })).toBe(403);
    const soul = await expectJson<{ content: string }>(
      await call(s.url, "/api/agents/assistant/soul", { session: member }),
      200,
    );
    expect(soul.content).not.toContain("# Evil");
    const agent = await expectJson<{ name: string }>(
      await call(s.url, "/api/agents/assistant", { session: member }),
      200,
    );
    expect(agent.name).not.toBe("Renamed");
  });

  it("answers 401 without a session and 403 to a cookie request without the CSRF token", async () => {
    const w = await world();
    const { s, member, open } = w;
    for (const [path, method] of [
      ["/api/agents", "GET"],
      ["/api/channels", "GET"],
      [`/api/channels/${open.id}/messages`, "GET"],
      [`/api/runs/${w.secretRunId}`, "GET"],
      ["/api/search?q=dumplings", "GET"],
      ["/api/memory", "GET"],
    ] as const) {
      expect([path, (await fetch(s.url + path, { method })).status]).toEqual([path, 401]);
    }
    const anonymousPost = await call(s.url, `/api/channels/${open.id}/messages`, { body: { text: "hi" } });
    expect(anonymousPost.status).toBe(401);
    const forged = await call(s.url, `/api/channels/${open.id}/messages`, {
      session: member,
      noCsrf: true,
      body: { text: "forged" },
    });
    expect(forged.status).toBe(403);
    expect(((await forged.json()) as { error: { message: string } }).error.message).toContain("X-CSRF-Token");
    // A bearer session token carries no ambient authority, so it needs no CSRF token.
    const bearer = await call(s.url, `/api/channels/${open.id}/messages`, {
      session: member,
      as: "bearer",
      body: { text: "via bearer" },
    });
    expect(bearer.status).toBe(201);
    const texts = (
      await expectJson<ChannelMessage[]>(
        await call(s.url, `/api/channels/${open.id}/messages`, { session: member }),
        200,
      )
    ).map((m) => m.text);
    expect(texts).toEqual(["dumplings for everyone", "via bearer"]);
  });
});

describe("rate limits", () => {
  it("limits message sending per user with 429 and Retry-After", async () => {
    const s = await startTeamServer({ rateLimits: { messagePerUser: { capacity: 2, perMinute: 1 } } });
    const { owner } = await withUsers(s.url);
    const group = await expectJson<ChannelRecord>(
      await call(s.url, "/api/channels", {
        session: owner,
        body: { kind: "group", name: "G", agentIds: [] },
      }),
      201,
    );
    const send = (text: string) =>
      call(s.url, `/api/channels/${group.id}/messages`, { session: owner, body: { text } });
    expect((await send("one")).status).toBe(201);
    expect((await send("two")).status).toBe(201);
    const limited = await send("three");
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    const texts = (
      await expectJson<ChannelMessage[]>(
        await call(s.url, `/api/channels/${group.id}/messages`, { session: owner }),
        200,
      )
    ).map((m) => m.text);
    expect(texts).toEqual(["one", "two"]);
  });
});

describe("access over WebSocket", () => {
  it("refuses subscribing to another channel, and leaks none of its events", async () => {
    const w = await world();
    const { s, owner, member, guest, secret, open } = w;
    const memberSocket = await openSocket(s, member);
    const guestSocket = connect(s.url);
    await guestSocket.opened;
    guestSocket.send({ type: "auth", token: guest.token });
    await guestSocket.next((f) => f.type === "ready");
    const ownerSocket = await openSocket(s, owner);
    await follow(ownerSocket, secret.id);

    for (const socket of [memberSocket, guestSocket]) {
      socket.send({ type: "subscribe", channelId: secret.id });
      const refused = await socket.next((f) => f.type === "error" && f.channelId === secret.id);
      expect(refused.code).toBe("not_found");
      expect(String(refused.message)).not.toContain("Secret");
      await follow(socket, open.id);
    }

    // Live activity in the secret channel: a message, a run with deltas, an answer.
    const { runs } = await expectJson<PostResult>(
      await call(s.url, `/api/channels/${secret.id}/messages`, {
        session: owner,
        body: { text: "@assistant more secrets" },
      }),
      201,
    );
    await ownerSocket.next(runFrame(runs[0]!.id, "done"));
    // And something in the open channel, which both must receive.
    await call(s.url, `/api/channels/${open.id}/messages`, { session: owner, body: { text: "open news" } });
    for (const socket of [memberSocket, guestSocket]) {
      await socket.next((f) => f.type === "message" && (f.message as ChannelMessage).text === "open news");
      await flush(socket);
      const leaked = socket.frames.filter((f) => f.channelId === secret.id && f.type !== "error");
      expect(leaked).toEqual([]);
      expect(JSON.stringify(socket.frames)).not.toContain("more secrets");
      socket.ws.close();
    }
    expect(ownerSocket.frames.some((f) => f.type === "agent" && f.runId === runs[0]!.id)).toBe(true);
    ownerSocket.ws.close();
  });
});

describe("validation", () => {
  it("answers bad bodies and queries with 400 and the issues", async () => {
    const s = await startTeamServer({ llmUrl: llm.url });
    const { owner } = await withUsers(s.url);
    const issuesOf = async (res: Response, status = 400) =>
      (await expectJson<{ error: { code: string; issues?: Array<{ path: string }> } }>(res, status)).error;

    const agent = await issuesOf(
      await call(s.url, "/api/agents", { session: owner, body: { id: 5, name: "" } }),
    );
    expect(agent.code).toBe("invalid");
    expect(agent.issues?.map((i) => i.path).sort()).toEqual(["id", "name"]);
    const badId = await expectJson<{ error: { message: string } }>(
      await call(s.url, "/api/agents", { session: owner, body: { id: "Bad Id!", name: "Bad" } }),
      400,
    );
    expect(badId.error.message).toContain("lower-case letters");
    expect(
      (await call(s.url, "/api/agents", { session: owner, body: { id: "writer", name: "Again" } })).status,
    ).toBe(409);
    expect((await call(s.url, "/api/agents/nobody", { session: owner })).status).toBe(404);
    expect((await call(s.url, "/api/runs/no-such-run", { session: owner })).status).toBe(404);

    const channel = await issuesOf(
      await call(s.url, "/api/channels", {
        session: owner,
        body: { kind: "circle", name: "x", agentIds: [] },
      }),
    );
    expect(channel.issues?.map((i) => i.path)).toEqual(["kind"]);
    const unknownUser = await issuesOf(
      await call(s.url, "/api/channels", {
        session: owner,
        body: { kind: "group", name: "x", agentIds: ["writer"], userIds: ["nobody"] },
      }),
    );
    expect(unknownUser.issues?.map((i) => i.path)).toEqual(["userIds.0"]);
    const group = await expectJson<ChannelRecord>(
      await call(s.url, "/api/channels", {
        session: owner,
        body: { kind: "group", name: "G", agentIds: ["writer"] },
      }),
      201,
    );
    const messages = `/api/channels/${group.id}/messages`;
    expect(
      (await issuesOf(await call(s.url, messages, { session: owner, body: {} }))).issues?.[0]?.path,
    ).toBe("text");
    expect((await call(s.url, messages, { session: owner, body: { text: 42 } })).status).toBe(400);
    expect(
      (await call(s.url, messages, { session: owner, body: { text: "x".repeat(33 * 1024) } })).status,
    ).toBe(400);
    // Short in characters, long in bytes: the facade's 32 KB check.
    expect(
      (await call(s.url, messages, { session: owner, body: { text: "饺".repeat(12_000) } })).status,
    ).toBe(400);
    expect(
      (
        await call(s.url, messages, {
          session: owner,
          body: "text=hi",
          headers: { "content-type": "text/plain" },
        })
      ).status,
    ).toBe(400);
    expect(
      (await issuesOf(await call(s.url, `${messages}?limit=0`, { session: owner }))).issues?.[0]?.path,
    ).toBe("limit");
    expect((await call(s.url, `${messages}?before=abc`, { session: owner })).status).toBe(400);
    expect((await call(s.url, "/api/search", { session: owner })).status).toBe(400);
    const flowAction = await issuesOf(
      await call(s.url, "/api/flows/some-flow/actions", { session: owner, body: { action: "skip" } }),
    );
    expect(flowAction.issues?.[0]?.path).toBe("stepIndex");
    expect(
      (await call(s.url, "/api/flows/some-flow/actions", { session: owner, body: { action: "explode" } }))
        .status,
    ).toBe(400);
    expect(
      (await call(s.url, "/api/flows/some-flow/actions", { session: owner, body: { action: "stop" } }))
        .status,
    ).toBe(404);
    // Nothing invalid was stored.
    expect(await expectJson<ChannelMessage[]>(await call(s.url, messages, { session: owner }), 200)).toEqual(
      [],
    );

    // A null model in a PATCH goes back to the default model.
    await call(s.url, "/api/agents/writer", {
      session: owner,
      method: "PATCH",
      body: { model: "openai:gpt-x" },
    });
    const reset = await expectJson<{ model?: string }>(
      await call(s.url, "/api/agents/writer", { session: owner, method: "PATCH", body: { model: null } }),
      200,
    );
    expect(reset.model).toBeUndefined();
    // Over the server's body limit altogether (last: the server drops that connection).
    expect(
      (await call(s.url, messages, { session: owner, body: { text: "x".repeat(1024 * 1024 + 10) } })).status,
    ).toBe(413);
  });
});
