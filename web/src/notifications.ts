/**
 * Browser notifications: what this browser was allowed to show (the person's choices, kept in
 * localStorage, and the browser's permission), which live frames deserve one (an agent's answer in a
 * direct chat, a mention, a run waiting for an approval) while the tab is hidden, and showing them
 * through the service worker, whose click opens the message (see `public/sw.js`).
 */

import { t } from "./i18n/index.js";
import type { AppState } from "./state/app.js";
import type { ChannelMessage, ServerFrame } from "./types.js";

export interface NotificationPrefs {
  /** Turned on in Settings → Notifications (the browser's permission is asked then). */
  enabled: boolean;
  answers: boolean;
  mentions: boolean;
  approvals: boolean;
}

export type NotificationKind = "answers" | "mentions" | "approvals";

/** What one notification says and where its click leads. */
export interface NotificationSpec {
  kind: NotificationKind;
  title: string;
  body: string;
  /** Notifications with one tag replace each other (one per chat and kind). */
  tag: string;
  channelId: string;
  messageId?: number;
}

const STORAGE_KEY = "dimsum.notifications";
const DEFAULTS: NotificationPrefs = { enabled: false, answers: true, mentions: true, approvals: true };
const BODY_MAX = 160;

/** The saved choices (defaults when none or unreadable). */
export function loadNotificationPrefs(storage: Pick<Storage, "getItem"> = localStorage): NotificationPrefs {
  try {
    const raw = storage.getItem(STORAGE_KEY);
    if (!raw) return { ...DEFAULTS };
    const saved = JSON.parse(raw) as Partial<Record<keyof NotificationPrefs, unknown>>;
    const flag = (key: keyof NotificationPrefs) =>
      typeof saved[key] === "boolean" ? (saved[key] as boolean) : DEFAULTS[key];
    return {
      enabled: flag("enabled"),
      answers: flag("answers"),
      mentions: flag("mentions"),
      approvals: flag("approvals"),
    };
  } catch {
    return { ...DEFAULTS };
  }
}

export function saveNotificationPrefs(
  prefs: NotificationPrefs,
  storage: Pick<Storage, "setItem"> = localStorage,
): void {
  try {
    storage.setItem(STORAGE_KEY, JSON.stringify(prefs));
  } catch {
    // Private mode or a full storage: the choice lasts until the page closes.
  }
}

/** The browser's answer so far: `unsupported` where there is no Notification API (or no HTTPS). */
export function notificationPermission(): NotificationPermission | "unsupported" {
  if (typeof Notification === "undefined" || !window.isSecureContext) return "unsupported";
  return Notification.permission;
}

function shorten(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > BODY_MAX ? `${flat.slice(0, BODY_MAX - 1)}…` : flat;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Whether `text` mentions `@username` as a word (not inside an e-mail address or a longer name). */
export function mentionsUser(text: string, username: string): boolean {
  return new RegExp(`(^|[^\\w@.])@${escapeRegExp(username)}(?![\\w-])`, "i").test(text);
}

/** An agent's name; people are not named (a member may not list accounts). */
function agentName(state: AppState, message: ChannelMessage): string | undefined {
  if (message.author.type !== "agent") return undefined;
  return state.agents.find((a) => a.id === message.author.id)?.name ?? message.author.id;
}

/**
 * The notification a frame deserves for the signed-in person, given the state before it applied
 * and their choices; undefined when none (their own messages, chats they are not in, kinds turned off).
 */
export function notificationFor(
  frame: ServerFrame,
  state: AppState,
  prefs: NotificationPrefs,
): NotificationSpec | undefined {
  if (!prefs.enabled || state.auth.phase !== "ready") return undefined;
  const me = state.auth.user;
  if (frame.type !== "message" && frame.type !== "agent") return undefined;
  const channel = state.channels.list.find((c) => c.id === frame.channelId);
  // Admins hear of every chat; only the ones they belong to notify them.
  if (!channel?.members.some((m) => m.type === "user" && m.id === me.id)) return undefined;
  if (frame.type === "message") {
    const message = frame.message;
    if (message.author.type === "user" && message.author.id === me.id) return undefined;
    const base = { channelId: channel.id, messageId: message.id, body: shorten(message.text) };
    if (channel.kind === "direct" && message.author.type === "agent" && prefs.answers) {
      return {
        ...base,
        kind: "answers",
        title: t("notify.answered", { name: agentName(state, message) ?? t("notify.someone") }),
        tag: `answer:${channel.id}`,
      };
    }
    if (channel.kind !== "direct" && prefs.mentions && mentionsUser(message.text, me.username)) {
      return {
        ...base,
        kind: "mentions",
        title: t("notify.mentioned", {
          name: agentName(state, message) ?? t("notify.someone"),
          channel: channel.name,
        }),
        tag: `mention:${channel.id}`,
      };
    }
    return undefined;
  }
  const event = frame.event;
  if (event.type !== "approval" || event.state !== "requested" || !prefs.approvals) return undefined;
  const agentId = state.chat?.runs[frame.runId]?.run?.agentId;
  const agent = state.agents.find((a) => a.id === agentId)?.name ?? t("notify.anAgent");
  return {
    kind: "approvals",
    title: t("notify.approval", { name: agent, channel: channel.name }),
    body: shorten(event.summary || event.tool),
    tag: `approval:${frame.runId}:${event.callId}`,
    channelId: channel.id,
  };
}

/** The data a notification carries to the service worker's click handler. */
export interface NotificationTarget {
  channelId: string;
  messageId?: number;
}

/** Shows it through the service worker (its click opens the chat) or, without one, from the page. */
export async function showNotification(
  spec: NotificationSpec,
  onClickInPage: (target: NotificationTarget) => void,
): Promise<void> {
  if (notificationPermission() !== "granted") return;
  const data: NotificationTarget = {
    channelId: spec.channelId,
    ...(spec.messageId !== undefined ? { messageId: spec.messageId } : {}),
  };
  const options: NotificationOptions = { body: spec.body, tag: spec.tag, icon: "/icon-192.png", data };
  const registration = await navigator.serviceWorker?.getRegistration().catch(() => undefined);
  if (registration?.active) {
    await registration.showNotification(spec.title, options);
    return;
  }
  const shown = new Notification(spec.title, options);
  shown.onclick = () => {
    window.focus();
    onClickInPage(data);
    shown.close();
  };
}

/** Reads a `{type: "open-notification", …}` message the service worker posts after a click. */
export function notificationTargetOf(data: unknown): NotificationTarget | undefined {
  if (typeof data !== "object" || data === null) return undefined;
  const message = data as { type?: unknown; channelId?: unknown; messageId?: unknown };
  if (message.type !== "open-notification" || typeof message.channelId !== "string") return undefined;
  return {
    channelId: message.channelId,
    ...(typeof message.messageId === "number" ? { messageId: message.messageId } : {}),
  };
}
