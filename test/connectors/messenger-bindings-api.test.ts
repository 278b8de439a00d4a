/**
 * Binding chats and linking people through the API (the connectors page), and one conversation: a
 * web message to a bound group is posted to the external chat labelled with the person's name (a
 * per-binding switch), and messages from the chat are in the web group.
 */
import { describe, expect, it } from "vitest";
import { FakeTelegram } from "../../src/testing/fake-telegram.js";
import { call, login } from "../server/helpers.js";
import {
  type ConnectorServer,
  eventually,
  onCleanup,
  startConnector,
  startConnectorServer,
} from "./harness.js";

interface ChatView {
  chatId: string;
  name?: string;
  group: boolean;
  mode: "direct" | "group";
  channelId?: string;
  channelName?: string;
  mirror: boolean;
}

async function setup() {
  const server = await startConnectorServer();
  const telegram = await FakeTelegram.start();
  onCleanup(() => telegram.close());
  const created = await server.createConnector({
    type: "telegram",
    name: "Tg bot",
    agentId: "assistant",
    settings: { mode: "polling", baseUrl: telegram.url, pollTimeoutSec: 1, streaming: false },
    secrets: { botToken: telegram.token },
  });
  await startConnector(server, created.id);
  const group = await server.team.createChannel(server.ownerActor, {
    kind: "group",
    name: "Release crew",
    leaderAgentId: "assistant",
    agentIds: ["assistant", "coder"],
    userIds: [server.owner.userId],
  });
  await server.team.updateChannel(server.ownerActor, group.id, { queueMode: "followup" });
  return { server, telegram, created, group };
}

async function json<T>(res: Response, status = 200): Promise<T> {
  const text = await res.text();
  if (res.status !== status) throw new Error(`HTTP ${res.status}: ${text}`);
  return (text === "" ? undefined : JSON.parse(text)) as T;
}

async function chats(server: ConnectorServer, id: string): Promise<ChatView[]> {
  return json<ChatView[]>(await server.api(`/api/connectors/${id}/chats`));
}

describe("binding chats and linking people through the API", () => {
  it("lists the chats seen, binds one to a group and back, and mirrors web messages labelled", async () => {
    const { server, telegram, created, group } = await setup();
    telegram.userMessage({
      chatId: -2002,
      userId: 81,
      text: "hello bot",
      username: "ana",
      chatTitle: "Crew chat",
    });
    await telegram.waitUntil(() => telegram.sent.some((m) => m.chatId === "-2002"), "the direct answer");
    // A direct answer has no speaker label.
    expect(telegram.sent.find((m) => m.chatId === "-2002")?.bold).toBeUndefined();

    const [seen] = await chats(server, created.id);
    expect(seen).toMatchObject({
      chatId: "-2002",
      name: "Crew chat",
      group: true,
      mode: "direct",
      mirror: true,
    });
    const directId = seen?.channelId;

    // Unknown chat, or a direct chat given as a group: refused with a reason.
    const unknown = await server.api(`/api/connectors/${created.id}/chats/999`, {
      method: "PATCH",
      body: { mode: "group", channelId: group.id },
    });
    expect(unknown.status).toBe(404);
    const notGroup = await server.api(`/api/connectors/${created.id}/chats/-2002`, {
      method: "PATCH",
      body: { mode: "group", channelId: directId },
    });
    expect(notGroup.status).toBe(400);

    const bound = await json<ChatView>(
      await server.api(`/api/connectors/${created.id}/chats/-2002`, {
        method: "PATCH",
        body: { mode: "group", channelId: group.id },
      }),
    );
    expect(bound).toMatchObject({
      mode: "group",
      channelId: group.id,
      channelName: "Release crew",
      mirror: true,
    });

    // From the chat into the web group, labelled answers back.
    const sentBefore = telegram.sent.length;
    telegram.userMessage({
      chatId: -2002,
      userId: 81,
      text: "@coder ping",
      username: "ana",
      chatTitle: "Crew chat",
    });
    await telegram.waitUntil(
      () => telegram.sent.slice(sentBefore).some((m) => m.bold?.[0] === "💻 Coder"),
      "coder's labelled answer",
    );
    const inWeb = await server.team.listMessages(server.ownerActor, group.id);
    expect(inWeb.some((m) => m.author.type === "user" && m.text === "@coder ping")).toBe(true);
    // The chat's message was not posted back to it.
    expect(telegram.sent.some((m) => m.text.includes("@coder ping"))).toBe(false);

    // A web message goes to the chat, labelled with the person's name.
    await server.team.postMessage(server.ownerActor, group.id, "Release at five, everyone");
    await telegram.waitUntil(
      () => telegram.sent.some((m) => m.text.endsWith("Release at five, everyone")),
      "the mirrored web message",
    );
    expect(telegram.sent.find((m) => m.text.endsWith("Release at five, everyone"))?.bold).toEqual([
      "💬 alice",
    ]);

    // Switched off: web messages stay on the web.
    const off = await json<ChatView>(
      await server.api(`/api/connectors/${created.id}/chats/-2002`, {
        method: "PATCH",
        body: { mirror: false },
      }),
    );
    expect(off.mirror).toBe(false);
    await server.team.postMessage(server.ownerActor, group.id, "Web only, please");
    await eventually(async () => {
      const runs = await server.team.listChannelRuns(server.ownerActor, group.id);
      return runs.every((r) => r.status !== "queued" && r.status !== "running");
    }, "the leader's answer");
    await eventually(
      async () => (await server.connectors.outbox(created.id)).length === 0,
      "an empty outbox",
    );
    expect(telegram.sent.some((m) => m.text.includes("Web only, please"))).toBe(false);

    // Back to direct: the direct chat it had.
    const direct = await json<ChatView>(
      await server.api(`/api/connectors/${created.id}/chats/-2002`, {
        method: "PATCH",
        body: { mode: "direct" },
      }),
    );
    expect(direct).toMatchObject({ mode: "direct", channelId: directId });
  });

  it("links a person by an admin, refuses members, guests and guest accounts, and unlinks", async () => {
    const { server, telegram, created } = await setup();
    telegram.userMessage({ chatId: 91, userId: 91, text: "hi", username: "bo" });
    await telegram.waitUntil(() => telegram.sent.some((m) => m.chatId === "91"), "the answer");
    const people = await json<Array<{ externalUserId: string; name?: string; linkedTo?: unknown }>>(
      await server.api(`/api/connectors/${created.id}/people`),
    );
    expect(people).toEqual([expect.objectContaining({ externalUserId: "91", name: "bo" })]);
    expect(people[0]?.linkedTo).toBeUndefined();
    const guestId = (await server.channelMessages(created.id, "91")).find((m) => m.author.type === "user")
      ?.author.id;

    // A guest account is no one to link to.
    const toGuest = await server.api(`/api/connectors/${created.id}/people/91/link`, {
      method: "PUT",
      body: { userId: guestId },
    });
    expect(toGuest.status).toBe(400);

    await json(
      await server.api(`/api/connectors/${created.id}/people/91/link`, {
        method: "PUT",
        body: { userId: server.owner.userId },
      }),
      204,
    );
    const linked = await json<Array<{ linkedTo?: { username: string } }>>(
      await server.api(`/api/connectors/${created.id}/people`),
    );
    expect(linked[0]?.linkedTo?.username).toBe("alice");
    telegram.userMessage({ chatId: 91, userId: 91, text: "now as alice", username: "bo" });
    await eventually(
      async () => (await server.channelMessages(created.id, "91")).some((m) => m.text === "now as alice"),
      "the linked message",
    );
    const asAlice = (await server.channelMessages(created.id, "91")).find((m) => m.text === "now as alice");
    expect(asAlice?.author.id).toBe(server.owner.userId);

    // A member may ask for a link code but not manage connectors; a guest session may do neither.
    const member = await json<{ id: string }>(
      await server.api("/api/users", {
        body: { username: "maria", password: "member-password-1", role: "member" },
      }),
      201,
    );
    expect(member.id).toBeTruthy();
    const maria = await login(server.url, "maria", "member-password-1");
    const code = await call(server.url, "/api/account/messenger-link", {
      session: maria,
      as: "bearer",
      method: "POST",
    });
    expect(code.status).toBe(201);
    expect(((await code.json()) as { code: string }).code).toMatch(/^\d{6}$/);
    const manage = await call(server.url, `/api/connectors/${created.id}/people/91/link`, {
      session: maria,
      as: "bearer",
      method: "PUT",
      body: { userId: null },
    });
    expect(manage.status).toBe(403);

    await json(
      await server.api(`/api/connectors/${created.id}/people/91/link`, {
        method: "PUT",
        body: { userId: null },
      }),
      204,
    );
    telegram.userMessage({ chatId: 91, userId: 91, text: "guest again", username: "bo" });
    await eventually(
      async () => (await server.channelMessages(created.id, "91")).some((m) => m.text === "guest again"),
      "the unlinked message",
    );
    const again = (await server.channelMessages(created.id, "91")).find((m) => m.text === "guest again");
    expect(again?.author.id).toBe(guestId);
  });
});
