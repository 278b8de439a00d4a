import { describe, expect, it } from "vitest";
import { type AppAction, type AppState, appReducer, initialAppState } from "../../web/src/state/app.js";
import {
  bumpUnread,
  channelsReducer,
  emptyChannels,
  splitChannels,
  totalUnread,
} from "../../web/src/state/channels.js";
import { createStore } from "../../web/src/state/store.js";
import { channel, message } from "./fixtures.js";

const user = { id: "u1", username: "ana", role: "member" as const };

function loggedIn(...actions: AppAction[]): AppState {
  return [
    { type: "auth", auth: { phase: "ready", user } } as AppAction,
    {
      type: "channels_loaded",
      list: [
        { ...channel("c2", { name: "beta" }), unread: 0 },
        { ...channel("c1", { name: "alpha" }), unread: 3 },
        { ...channel("d1", { name: "coder", kind: "direct" }), unread: 0 },
      ],
    } as AppAction,
    ...actions,
  ].reduce(appReducer, initialAppState());
}

const unread = (state: AppState) => Object.fromEntries(state.channels.list.map((c) => [c.id, c.unread]));

describe("appReducer", () => {
  it("sorts channels by name and clears unread when a channel is opened", () => {
    const state = loggedIn({ type: "open_channel", channelId: "c1" });
    expect(state.channels.list.map((c) => c.id)).toEqual(["c1", "c2", "d1"]);
    expect(unread(state)).toEqual({ c1: 0, c2: 0, d1: 0 });
    expect(state.chat?.channelId).toBe("c1");
  });

  it("counts messages from others in channels that are not open", () => {
    const state = loggedIn(
      { type: "open_channel", channelId: "c1" },
      {
        type: "frame",
        frame: {
          type: "message",
          channelId: "c2",
          message: message(5, { channelId: "c2", author: { type: "agent", id: "coder" } }),
        },
      },
      {
        type: "frame",
        frame: {
          type: "message",
          channelId: "c2",
          message: message(6, { channelId: "c2", author: { type: "user", id: "u2" } }),
        },
      },
      // Own messages (from another tab) and messages of the open channel are not unread.
      {
        type: "frame",
        frame: {
          type: "message",
          channelId: "c2",
          message: message(7, { channelId: "c2", author: { type: "user", id: "u1" } }),
        },
      },
      {
        type: "frame",
        frame: {
          type: "message",
          channelId: "c1",
          message: message(8, { author: { type: "agent", id: "coder" } }),
        },
      },
    );
    expect(unread(state)).toEqual({ c1: 0, c2: 2, d1: 0 });
    expect(state.chat?.messages.map((m) => m.id)).toEqual([8]);
  });

  it("routes backlog frames to the open chat and channel frames to the list", () => {
    const state = loggedIn(
      { type: "open_channel", channelId: "c1" },
      { type: "frame", frame: { type: "backlog", channelId: "c1", messages: [message(1), message(2)] } },
      {
        type: "frame",
        frame: { type: "channel", channelId: "c2", channel: channel("c2", { name: "renamed" }) },
      },
    );
    expect(state.chat?.messages.map((m) => m.id)).toEqual([1, 2]);
    expect(state.channels.list.find((c) => c.id === "c2")?.name).toBe("renamed");
  });

  it("turns server error frames into notices with increasing ids", () => {
    const state = loggedIn(
      { type: "frame", frame: { type: "error", message: "bad frame" } },
      { type: "notice", kind: "info", text: "saved" },
    );
    expect(state.notices).toEqual([
      { id: 1, kind: "error", text: "bad frame" },
      { id: 2, kind: "info", text: "saved" },
    ]);
    expect(appReducer(state, { type: "dismiss", id: 1 }).notices.map((n) => n.id)).toEqual([2]);
  });

  it("keeps agents sorted by name and applies saves and removals", () => {
    const a = (id: string, name: string) => ({
      id,
      name,
      emoji: "🤖",
      toolsDeny: [],
      memory: true,
      skills: [],
      askFirst: [],
      createdAt: 1,
      updatedAt: 1,
    });
    let state = loggedIn({ type: "agents_loaded", agents: [a("w", "Writer"), a("c", "Coder")] });
    expect(state.agents.map((x) => x.id)).toEqual(["c", "w"]);
    state = appReducer(state, { type: "agent_saved", agent: a("c", "Zed") });
    expect(state.agents.map((x) => x.name)).toEqual(["Writer", "Zed"]);
    state = appReducer(state, { type: "agent_removed", agentId: "w" });
    expect(state.agents.map((x) => x.id)).toEqual(["c"]);
  });

  it("forgets everything the previous user could see on logout", () => {
    const state = loggedIn(
      { type: "open_channel", channelId: "c1" },
      { type: "auth", auth: { phase: "login", needsSetup: false } },
    );
    expect(state.channels).toEqual(emptyChannels);
    expect(state.chat).toBeUndefined();
    expect(state.auth).toEqual({ phase: "login", needsSetup: false });
  });
});

describe("channels helpers", () => {
  it("bumpUnread ignores unknown channels; splitChannels and totalUnread summarise", () => {
    const state = channelsReducer(emptyChannels, {
      type: "channels_loaded",
      list: [
        { ...channel("g"), unread: 1 },
        { ...channel("d", { kind: "direct" }), unread: 2 },
      ],
    });
    expect(bumpUnread(state, "nope")).toBe(state);
    expect(totalUnread(bumpUnread(state, "g").list)).toBe(4);
    const { direct, groups } = splitChannels(state.list);
    expect(direct.map((c) => c.id)).toEqual(["d"]);
    expect(groups.map((c) => c.id)).toEqual(["g"]);
  });

  it("channel_saved keeps the unread count of a known channel", () => {
    const state = channelsReducer(emptyChannels, {
      type: "channels_loaded",
      list: [{ ...channel("g"), unread: 4 }],
    });
    const next = channelsReducer(state, {
      type: "channel_saved",
      channel: channel("g", { name: "new name" }),
    });
    expect(next.list).toEqual([{ ...channel("g", { name: "new name" }), unread: 4 }]);
  });
});

describe("createStore", () => {
  it("notifies listeners only on real changes, and stops after unsubscribe", () => {
    const store = createStore(appReducer, initialAppState());
    let calls = 0;
    const unsubscribe = store.subscribe(() => {
      calls += 1;
    });
    store.dispatch({ type: "connection", status: "open" });
    store.dispatch({ type: "connection", status: "open" });
    expect(calls).toBe(1);
    unsubscribe();
    store.dispatch({ type: "connection", status: "reconnecting" });
    expect(calls).toBe(1);
    expect(store.getState().connection).toBe("reconnecting");
  });
});

describe("rights that change on an open socket", () => {
  it("takes the new role from a reauthorized frame, for the signed-in user only", () => {
    const promoted = loggedIn({
      type: "frame",
      frame: { type: "reauthorized", user: { id: "u1", role: "admin" } },
    });
    expect(promoted.auth.phase === "ready" && promoted.auth.user.role).toBe("admin");
    const other = loggedIn({
      type: "frame",
      frame: { type: "reauthorized", user: { id: "u2", role: "owner" } },
    });
    expect(other.auth.phase === "ready" && other.auth.user.role).toBe("member");
  });

  it("drops an unsubscribed channel from the list, and closes it with a notice when open", () => {
    const lost = { type: "unsubscribed", channelId: "c1", message: "no access" } as const;
    const elsewhere = loggedIn({ type: "open_channel", channelId: "c2" }, { type: "frame", frame: lost });
    expect(elsewhere.channels.list.map((c) => c.id)).toEqual(["c2", "d1"]);
    expect(elsewhere.chat?.channelId).toBe("c2");
    expect(elsewhere.notices).toEqual([]);
    const open = loggedIn({ type: "open_channel", channelId: "c1" }, { type: "frame", frame: lost });
    expect(open.channels.list.map((c) => c.id)).toEqual(["c2", "d1"]);
    expect(open.chat).toBeUndefined();
    expect(open.notices.map((n) => n.text)).toEqual(["You no longer have access to this chat."]);
  });
});

describe("budget notices", () => {
  const notice = (scopeId: string, cheaperModel: string | null) => ({
    type: "budget_notice" as const,
    channelId: "budget:bud_1",
    notice: {
      budgetId: "bud_1",
      scope: "person" as const,
      scopeId,
      period: "day" as const,
      unit: "usd" as const,
      softLimit: 0.005,
      hardLimit: 0.01,
      spent: 0.006,
      cheaperModel,
      at: 1,
    },
  });

  it("show a notice saying whose budget passed its soft limit and the model the next answers use", () => {
    const mine = loggedIn({ type: "frame", frame: notice("u1", "openai:gpt-4o-mini") });
    expect(mine.notices.map((n) => [n.kind, n.text])).toEqual([
      [
        "info",
        "Your daily budget passed its soft limit of $0.005 ($0.006 used). The next answers use openai:gpt-4o-mini.",
      ],
    ]);
    const theirs = loggedIn({ type: "frame", frame: notice("u9", null) });
    expect(theirs.notices.map((n) => n.text)).toEqual([
      "The daily budget of u9 passed its soft limit of $0.005 ($0.006 used).",
    ]);
    // The open chat is untouched.
    expect(
      loggedIn({ type: "open_channel", channelId: "c1" }, { type: "frame", frame: notice("u1", null) }).chat
        ?.messages,
    ).toEqual([]);
  });
});
