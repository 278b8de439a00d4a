import { describe, expect, it } from "vitest";
import {
  loadNotificationPrefs,
  mentionsUser,
  type NotificationPrefs,
  notificationFor,
  notificationTargetOf,
  saveNotificationPrefs,
} from "../../web/src/notifications.js";
import { type AppAction, type AppState, appReducer, initialAppState } from "../../web/src/state/app.js";
import type { ServerFrame } from "../../web/src/types.js";
import { channel, message } from "./fixtures.js";

const user = { id: "u1", username: "ana", role: "admin" as const };
const ON: NotificationPrefs = { enabled: true, answers: true, mentions: true, approvals: true };

function state(): AppState {
  return [
    { type: "auth", auth: { phase: "ready", user } } as AppAction,
    {
      type: "agents_loaded",
      agents: [{ id: "coder", name: "Coder", emoji: "🧑‍💻" }],
    } as AppAction,
    {
      type: "channels_loaded",
      list: [
        { ...channel("g1", { name: "Launch" }), unread: 0 },
        { ...channel("d1", { name: "Coder", kind: "direct" }), unread: 0 },
        // Listed for an admin, who is not a member.
        { ...channel("x1", { name: "Others", members: [{ type: "user", id: "u9" }] }), unread: 0 },
      ],
    } as AppAction,
  ].reduce(appReducer, initialAppState());
}

const agentMessage = (channelId: string, text: string): ServerFrame => ({
  type: "message",
  channelId,
  message: message(7, { channelId, author: { type: "agent", id: "coder" }, text }),
});

const approval = (channelId: string, state: "requested" | "approved"): ServerFrame => ({
  type: "agent",
  channelId,
  runId: "r1",
  seq: 3,
  event: {
    type: "approval",
    runId: "r1",
    callId: "c1",
    tool: "execute_command",
    args: {},
    summary: "rm -rf build",
    reason: "asks first",
    state,
  },
});

describe("notificationFor", () => {
  it("an agent's answer in a direct chat", () => {
    expect(notificationFor(agentMessage("d1", "Done:\n  all   tests pass"), state(), ON)).toEqual({
      kind: "answers",
      title: "Coder answered",
      body: "Done: all tests pass",
      tag: "answer:d1",
      channelId: "d1",
      messageId: 7,
    });
  });

  it("a mention in a group, not a plain group message nor one's own", () => {
    const mention = notificationFor(
      {
        type: "message",
        channelId: "g1",
        message: message(8, { channelId: "g1", author: { type: "user", id: "u2" }, text: "@ana look" }),
      },
      state(),
      ON,
    );
    expect(mention?.title).toBe("Someone mentioned you in Launch");
    expect(notificationFor(agentMessage("g1", "@ana the build is green"), state(), ON)?.title).toBe(
      "Coder mentioned you in Launch",
    );
    expect(notificationFor(agentMessage("g1", "the build is green"), state(), ON)).toBeUndefined();
    const own = {
      type: "message",
      channelId: "g1",
      message: message(9, { channelId: "g1", text: "@ana me" }),
    } as const;
    expect(notificationFor(own, state(), ON)).toBeUndefined();
  });

  it("a run waiting for approval, once (not its decision)", () => {
    const spec = notificationFor(approval("g1", "requested"), state(), ON);
    expect(spec).toMatchObject({ kind: "approvals", body: "rm -rf build", channelId: "g1" });
    expect(spec?.title).toBe("An agent needs your approval in Launch");
    expect(notificationFor(approval("g1", "approved"), state(), ON)).toBeUndefined();
  });

  it("nothing when turned off, for a kind turned off, or in a chat one only sees as an admin", () => {
    expect(notificationFor(agentMessage("d1", "hi"), state(), { ...ON, enabled: false })).toBeUndefined();
    expect(notificationFor(agentMessage("d1", "hi"), state(), { ...ON, answers: false })).toBeUndefined();
    expect(
      notificationFor(approval("g1", "requested"), state(), { ...ON, approvals: false }),
    ).toBeUndefined();
    expect(notificationFor(agentMessage("x1", "@ana hi"), state(), ON)).toBeUndefined();
    expect(notificationFor({ type: "pong" }, state(), ON)).toBeUndefined();
  });
});

describe("mentionsUser", () => {
  it("matches @name as a word only", () => {
    expect(mentionsUser("hey @Ana, see this", "ana")).toBe(true);
    expect(mentionsUser("@ana", "ana")).toBe(true);
    expect(mentionsUser("mail ana@ana.org", "ana")).toBe(false);
    expect(mentionsUser("@anastasia hi", "ana")).toBe(false);
    expect(mentionsUser("@ana-bot hi", "ana")).toBe(false);
    expect(mentionsUser("@a.na", "a.na")).toBe(true);
    expect(mentionsUser("@aXna", "a.na")).toBe(false);
  });
});

describe("preferences and click messages", () => {
  it("round-trips the choices and falls back to defaults on junk", () => {
    const store = new Map<string, string>();
    const storage = {
      getItem: (k: string) => store.get(k) ?? null,
      setItem: (k: string, v: string) => store.set(k, v),
    };
    expect(loadNotificationPrefs(storage).enabled).toBe(false);
    saveNotificationPrefs({ ...ON, mentions: false }, storage);
    expect(loadNotificationPrefs(storage)).toEqual({ ...ON, mentions: false });
    store.set("dimsum.notifications", "{not json");
    expect(loadNotificationPrefs(storage).enabled).toBe(false);
  });

  it("reads only well-formed click messages", () => {
    expect(notificationTargetOf({ type: "open-notification", channelId: "d1", messageId: 4 })).toEqual({
      channelId: "d1",
      messageId: 4,
    });
    expect(notificationTargetOf({ type: "open-notification", channelId: 5 })).toBeUndefined();
    expect(notificationTargetOf("open")).toBeUndefined();
  });
});
