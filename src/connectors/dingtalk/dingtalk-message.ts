/**
 * DingTalk robot messages (the same JSON in Stream mode and in the HTTP callback) and the HTTP
 * callback's signature: headers `timestamp` (milliseconds) and `sign` = Base64(HMAC-SHA256(key =
 * AppSecret, `timestamp + "\n" + AppSecret`)), refused when the timestamp is more than an hour off.
 */
import { createHmac } from "node:crypto";
import { constantTimeEqual } from "../signatures.js";
import type { InboundFile, InboundMessage } from "../types.js";

/** Downloads a file of a robot message by its `downloadCode`. */
export type DingTalkDownload = (downloadCode: string) => InboundFile["download"];

export const DINGTALK_SIGN_WINDOW_MS = 60 * 60 * 1000;

/** A robot message as DingTalk sends it (the fields the connector reads). */
export interface DingTalkRobotMessage {
  msgId?: string;
  msgtype?: string;
  text?: { content?: string };
  /** Pictures, files and voice (`audio`): what to download, and DingTalk's recognised text. */
  content?: { downloadCode?: string; fileName?: string; recognition?: string; duration?: number };
  conversationId?: string;
  /** "1": one-to-one, "2": group. */
  conversationType?: string;
  conversationTitle?: string;
  senderId?: string;
  senderStaffId?: string;
  senderNick?: string;
  sessionWebhook?: string;
  sessionWebhookExpiredTime?: number;
  robotCode?: string;
}

/** Where answers to a chat go: its session webhook while valid, else the OpenAPI. */
export interface DingTalkChatRoute {
  webhook?: string;
  expiresAt?: number;
  group: boolean;
  staffId?: string;
  robotCode?: string;
}

/** The `sign` header DingTalk sends with `timestamp`. */
export function dingTalkSign(timestamp: string, appSecret: string): string {
  return createHmac("sha256", appSecret).update(`${timestamp}\n${appSecret}`, "utf8").digest("base64");
}

/** Why a callback is refused, or undefined when its signature is right and fresh. */
export function checkDingTalkSign(
  headers: Record<string, string | undefined>,
  appSecret: string,
  now: number,
): string | undefined {
  const timestamp = headers.timestamp;
  const sign = headers.sign;
  if (!timestamp || !sign) return "missing timestamp or sign header";
  if (!/^\d{1,16}$/.test(timestamp)) return "the timestamp header is not milliseconds";
  if (!constantTimeEqual(sign, dingTalkSign(timestamp, appSecret))) {
    return "the sign header does not match (check the AppSecret)";
  }
  if (Math.abs(now - Number(timestamp)) > DINGTALK_SIGN_WINDOW_MS) {
    return "the timestamp is more than an hour off (a replayed request or a wrong clock)";
  }
  return undefined;
}

/**
 * The platform-neutral message of a robot message; undefined for messages the connector ignores.
 * Text is taken as it is; a picture or file is downloaded by its `downloadCode` (with `download`); a
 * voice message is taken as the text DingTalk recognised in it (`recognition`); without it, its audio
 * (`downloadCode`) is left to the configured speech-to-text endpoint, or said unread when there is none.
 */
export function inboundOfRobotMessage(
  message: DingTalkRobotMessage,
  download?: DingTalkDownload,
): InboundMessage | undefined {
  if (!message.conversationId) return undefined;
  const userId = message.senderStaffId || message.senderId;
  if (!userId) return undefined;
  const group = message.conversationType === "2";
  const name = message.senderNick?.trim();
  const base = {
    ...(message.msgId ? { dedupeKey: `msg:${message.msgId}` } : {}),
    chat: {
      id: message.conversationId,
      ...(group
        ? { name: message.conversationTitle?.trim() || `group ${message.conversationId}`, group: true }
        : {}),
    },
    user: { id: userId, ...(name ? { name } : {}) },
  };
  const code = message.content?.downloadCode;
  switch (message.msgtype) {
    case "text": {
      const text = (message.text?.content ?? "").trim();
      return text === "" ? undefined : { ...base, text };
    }
    case "audio": {
      const heard = (message.content?.recognition ?? "").trim();
      if (heard !== "") return { ...base, text: `🎤 ${heard}` };
      // No recognition (turned off, or not given in that chat): the audio goes to speech-to-text.
      if (!code || !download) return { ...base, text: "", unsupported: ["a voice message"] };
      return {
        ...base,
        text: "",
        voice: { name: `voice-${message.msgId ?? "1"}.amr`, download: download(code) },
      };
    }
    case "picture":
    case "file": {
      if (!code || !download) return { ...base, text: "", unsupported: [`a ${message.msgtype}`] };
      const fileName =
        message.msgtype === "file"
          ? message.content?.fileName?.trim() || "file"
          : `picture-${message.msgId ?? "1"}.jpg`;
      return { ...base, text: "", files: [{ name: fileName, download: download(code) }] };
    }
    default:
      return undefined;
  }
}

/** How to answer the chat of a message. */
export function routeOf(message: DingTalkRobotMessage): DingTalkChatRoute {
  return {
    group: message.conversationType === "2",
    ...(message.sessionWebhook ? { webhook: message.sessionWebhook } : {}),
    ...(message.sessionWebhookExpiredTime ? { expiresAt: message.sessionWebhookExpiredTime } : {}),
    ...(message.senderStaffId ? { staffId: message.senderStaffId } : {}),
    ...(message.robotCode ? { robotCode: message.robotCode } : {}),
  };
}
