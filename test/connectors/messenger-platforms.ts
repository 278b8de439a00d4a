/**
 * The four messenger platforms behind one small interface, for table-driven tests of groups bound to
 * external chats: each starts its fake platform and a connector on it, lets a person say something in
 * a chat (real HTTP or the platform's own connection, as the connector takes it) and reads back what
 * the bot posted in a chat, with the label each platform shows for who speaks.
 */
import { FakeDingTalk, type FakeDingTalkMessage } from "../../src/testing/fake-dingtalk.js";
import {
  buildFeishuCardAction,
  buildFeishuEvent,
  cardButtons,
  FakeFeishu,
} from "../../src/testing/fake-feishu.js";
import { FakeTelegram, type FakeTelegramMessage } from "../../src/testing/fake-telegram.js";
import { buildWecomText, FakeWecom, randomEncodingAESKey } from "../../src/testing/fake-wecom.js";
import { type ConnectorServer, onCleanup, startConnector } from "./harness.js";

/** Who speaks in the tests: a person who links to the owner's web account, and a guest. */
export type Person = "admin" | "guest";

/** Something the bot posted in a chat. */
export interface Posted {
  /** The speaker label (card header, markdown title, bold prefix), when the platform shows one. */
  title?: string;
  text: string;
  /** The platform's id of the message, for presses. */
  ref: string;
  /** Whether it has approval buttons. */
  buttons: boolean;
}

export interface Rig {
  connectorId: string;
  /** The chat bound to a group. */
  groupChat: string;
  /** The admin's private chat with the bot (where `/link` goes). */
  adminChat: string;
  say(chatId: string, person: Person, text: string): Promise<void>;
  posted(chatId: string): Posted[];
  /**
   * Presses a card's button by (part of) its label, e.g. "Approve" or "Resume" (platforms with
   * buttons); resolves with the notice the presser saw.
   */
  press?(chatId: string, message: Posted, person: Person, choice: string): Promise<string>;
  /** How many times the platform updated a message in place (card updates, message edits). */
  updates(ref: string): number;
}

export interface Platform {
  name: string;
  start(server: ConnectorServer, agentId: string): Promise<Rig>;
}

const ENCRYPT_KEY = "fake-encrypt-key-abc";
const TOKEN = "fake-verification-token";

async function checked(res: Response, what: string): Promise<void> {
  if (res.status !== 200) throw new Error(`${what}: HTTP ${res.status} ${await res.text()}`);
}

const telegram: Platform = {
  name: "Telegram",
  async start(server, agentId) {
    const fake = await FakeTelegram.start();
    onCleanup(() => fake.close());
    const created = await server.createConnector({
      type: "telegram",
      name: "Tg bot",
      agentId,
      settings: { mode: "polling", baseUrl: fake.url, pollTimeoutSec: 1, streaming: false },
      secrets: { botToken: fake.token },
    });
    await startConnector(server, created.id);
    const ids: Record<Person, number> = { admin: 71, guest: 72 };
    const view = (m: FakeTelegramMessage): Posted => ({
      ...(m.bold?.[0] ? { title: m.bold[0] } : {}),
      text: m.text,
      ref: String(m.messageId),
      buttons: (m.buttons ?? []).length > 0,
    });
    return {
      connectorId: created.id,
      groupChat: "-1001",
      adminChat: "71",
      async say(chatId, person, text) {
        const id = Number(chatId);
        fake.userMessage({
          chatId: id,
          userId: ids[person],
          text,
          username: person,
          ...(id < 0 ? { chatTitle: "Ops room" } : {}),
        });
      },
      posted: (chatId) => fake.sent.filter((m) => m.chatId === chatId).map(view),
      updates: (ref) => fake.edits.filter((m) => String(m.messageId) === ref).length,
      async press(chatId, message, person, choice) {
        const sent = fake.sent.find((m) => m.chatId === chatId && String(m.messageId) === message.ref);
        if (!sent) throw new Error("no such message");
        const before = fake.callbackAnswers.length;
        fake.pressButton({
          message: structuredClone(sent),
          button: choice,
          userId: ids[person],
          username: person,
        });
        await fake.waitUntil(() => fake.callbackAnswers.length > before, "the callback answer");
        return fake.callbackAnswers.at(-1)?.text ?? "";
      },
    };
  },
};

const feishu: Platform = {
  name: "Feishu",
  async start(server, agentId) {
    const fake = await FakeFeishu.start();
    onCleanup(() => fake.close());
    const created = await server.createConnector({
      type: "feishu",
      name: "Lark bot",
      agentId,
      settings: { appId: fake.appId, baseUrl: fake.url, mode: "webhook" },
      secrets: { appSecret: fake.appSecret, encryptKey: ENCRYPT_KEY, verificationToken: TOKEN },
    });
    await startConnector(server, created.id);
    const post = (request: { headers: Record<string, string>; body: string }) =>
      fetch(`${server.url}${created.inboundPath}`, {
        method: "POST",
        headers: request.headers,
        body: request.body,
      });
    const openIds: Record<Person, string> = { admin: "ou_admin", guest: "ou_guest" };
    return {
      connectorId: created.id,
      groupChat: "oc_group",
      adminChat: "oc_p2p_admin",
      async say(chatId, person, text) {
        const event = buildFeishuEvent({
          encryptKey: ENCRYPT_KEY,
          verificationToken: TOKEN,
          chatId,
          openId: openIds[person],
          text,
          chatType: chatId === "oc_group" ? "group" : "p2p",
        });
        await checked(await post(event), "a Feishu event");
      },
      posted: (chatId) =>
        fake.messages
          .filter((m) => m.chatId === chatId)
          .map((m) => {
            const header = (m.card?.header as { title?: { content?: string } } | undefined)?.title?.content;
            return {
              ...(header ? { title: header } : {}),
              text: m.text,
              ref: m.messageId,
              buttons: cardButtons(m.card).length > 0,
            };
          }),
      updates: (ref) => fake.cardUpdates.filter((u) => u.messageId === ref).length,
      async press(chatId, message, person, choice) {
        const sent = fake.messages.find((m) => m.messageId === message.ref);
        const button = cardButtons(sent?.card).find((b) => b.label.includes(choice));
        if (!button) throw new Error(`no ${choice} button`);
        const res = await post(
          buildFeishuCardAction({
            encryptKey: ENCRYPT_KEY,
            verificationToken: TOKEN,
            openId: openIds[person],
            chatId,
            messageId: message.ref,
            value: button.value,
          }),
        );
        const body = (await res.json()) as { toast?: { content?: string } };
        return body.toast?.content ?? "";
      },
    };
  },
};

const dingtalk: Platform = {
  name: "DingTalk",
  async start(server, agentId) {
    const fake = await FakeDingTalk.start();
    onCleanup(() => fake.close());
    // Stream mode with a card template: cards for approvals and flows, answers streamed into cards.
    const created = await server.createConnector({
      type: "dingtalk",
      name: "DingTalk bot",
      agentId,
      settings: {
        clientId: fake.clientId,
        baseUrl: fake.url,
        mode: "stream",
        cardTemplateId: "dimsum-card.schema",
      },
      secrets: { clientSecret: fake.clientSecret },
    });
    await startConnector(server, created.id);
    await fake.waitUntil(() => fake.openStreams > 0, "the Stream connection");
    const sessions = new Map<string, string>();
    const staff: Record<Person, string> = { admin: "staff-admin", guest: "staff-guest" };
    // A card to one person's chat with the robot names the person.
    const chatOf = (m: FakeDingTalkMessage) =>
      m.via === "session" ? sessions.get(m.target) : m.target === staff.admin ? "cid-admin" : m.target;
    return {
      connectorId: created.id,
      groupChat: "cid-group",
      adminChat: "cid-admin",
      async say(chatId, person, text) {
        const message = fake.robotMessage({
          conversationId: chatId,
          text,
          senderStaffId: staff[person],
          senderNick: person,
          group: chatId === "cid-group",
        });
        sessions.set(new URL(message.sessionWebhook ?? "").searchParams.get("session") ?? "", chatId);
        const id = fake.pushRobotMessage(message);
        await fake.waitUntil(() => fake.acks.includes(id), "the robot message's acknowledgement");
      },
      posted: (chatId) =>
        fake.messages
          .filter((m) => chatOf(m) === chatId)
          .map((m, i) => {
            // The notification title is always set; a speaker also heads the text.
            const title = m.text.startsWith(`**${m.title}**\n\n`) ? m.title : undefined;
            return {
              ...(title ? { title } : {}),
              text: m.via === "card" ? `${m.title}\n${m.text}` : m.text,
              ref: m.outTrackId ?? String(i),
              buttons: fake.buttons(m).length > 0,
            };
          }),
      async press(_chatId, message, person, choice) {
        const card = fake.messages.find((m) => m.outTrackId === message.ref);
        const button = card ? fake.buttons(card).find((b) => b.text.includes(choice)) : undefined;
        if (!button) throw new Error(`no ${choice} button`);
        const answer = await fake.pressCard({
          outTrackId: message.ref,
          userId: staff[person],
          action: button.action,
        });
        return (answer.response?.userPrivateData?.cardParamMap?.notice ?? "").replace(/^\S+ /, "");
      },
      updates: (ref) => fake.cardUpdates.filter((u) => u.outTrackId === ref).length,
    };
  },
};

const wecom: Platform = {
  name: "WeCom",
  async start(server, agentId) {
    const fake = await FakeWecom.start();
    onCleanup(() => fake.close());
    const keys = {
      token: "FakeCallbackToken01",
      encodingAESKey: randomEncodingAESKey(),
      corpId: fake.corpId,
    };
    const created = await server.createConnector({
      type: "wecom",
      name: "WeCom app",
      agentId,
      settings: { corpId: fake.corpId, appAgentId: String(fake.agentId), baseUrl: fake.url },
      secrets: { token: keys.token, encodingAESKey: keys.encodingAESKey, corpSecret: fake.corpSecret },
    });
    await startConnector(server, created.id);
    const users: Record<Person, string> = { admin: "zhangsan", guest: "lisi" };
    const post = async (request: { query: Record<string, string>; body: string }) => {
      const res = await fetch(`${server.url}${created.inboundPath}?${new URLSearchParams(request.query)}`, {
        method: "POST",
        headers: { "content-type": "text/xml" },
        body: request.body,
      });
      await checked(res, "a WeCom callback");
    };
    return {
      connectorId: created.id,
      // An app's chat is one person's: the admin's own chat is bound.
      groupChat: "zhangsan",
      adminChat: "zhangsan",
      async say(_chatId, person, text) {
        await post(buildWecomText(keys, { from: users[person], text, agentId: fake.agentId }));
      },
      async press(_chatId, message, person, choice) {
        const card = fake.messages[Number(message.ref)];
        if (!card) throw new Error("no such card");
        const before = fake.messages.length;
        await post(fake.pressCard(keys, { from: users[person], message: card, button: choice }));
        const told = fake.messages.slice(before).find((m) => m.msgtype === "text")?.content ?? "";
        // A flow card's press is told in a text message (the card is updated when the flow ends).
        if (String(card.card?.task_id ?? "").startsWith("dfl-")) return told.replace(/^\S+ /, "");
        // A decision replaces the buttons; a refusal is told in a text message.
        if (card.replacedBy !== undefined) return card.replacedBy;
        return told;
      },
      posted: (chatId) =>
        fake.messages
          .map((m, i) => ({ m, i }))
          .filter(({ m }) => m.touser === chatId)
          .map(({ m, i }) => {
            const title = /^\*\*(.+?)\*\*\n\n/.exec(m.content)?.[1];
            return {
              ...(title ? { title } : {}),
              text: m.replacedBy !== undefined ? `${m.content}\n${m.replacedBy}` : m.content,
              ref: String(i),
              buttons: fake.buttons(m).length > 0,
            };
          }),
      updates: (ref) => (fake.messages[Number(ref)]?.replacedBy !== undefined ? 1 : 0),
    };
  },
};

export const PLATFORMS: readonly Platform[] = [telegram, feishu, dingtalk, wecom];
