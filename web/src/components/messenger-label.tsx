/**
 * Where a person's message came from when it was posted in a messenger chat bound to this channel:
 * the platform as a small label beside the sender's name (their name as the platform knows it).
 */
import { type MessageKey, t } from "../i18n/index.js";
import type { ChannelMessage } from "../types.js";

/** The messenger a message was posted from, and its sender's name there, if it came from one. */
export function messengerOf(message: ChannelMessage): { platform: string; name: string } | undefined {
  const part = message.parts.find((p) => p.type === "messenger");
  return part?.type === "messenger" ? { platform: part.platform, name: part.name } : undefined;
}

const PLATFORM_NAMES: Record<string, MessageKey> = {
  telegram: "messenger.telegram",
  feishu: "messenger.feishu",
  dingtalk: "messenger.dingtalk",
  wecom: "messenger.wecom",
  webhook: "messenger.webhook",
};

/** The platform's name in the UI's language (an unknown platform as it is stored). */
export function platformName(platform: string): string {
  const key = PLATFORM_NAMES[platform];
  return key ? t(key) : platform;
}

/** The small "via Feishu" label of a message from a messenger chat. */
export function MessengerBadge({ platform }: { platform: string }) {
  return (
    <span class="msg-platform" data-testid="message-platform" data-platform={platform}>
      {t("messenger.via", { platform: platformName(platform) })}
    </span>
  );
}
