/**
 * What happens to a message sent while an agent of the chat is working (the chat's queue mode): the
 * words the chat settings and the composer use for each mode, and which mode a chat has.
 */
import { type MessageKey, t } from "../i18n/index.js";
import type { ChannelRecord, QueueMode, TeamRun } from "../types.js";

export const QUEUE_MODES: readonly QueueMode[] = ["steer", "followup", "collect", "interrupt"];

export interface QueueModeInfo {
  /** The choice in the chat settings. */
  label: MessageKey;
  /** One line under it. */
  explanation: MessageKey;
  /** The composer's hint while an agent works: what sending now does. */
  hint: MessageKey;
}

export const QUEUE_MODE_INFO: Record<QueueMode, QueueModeInfo> = {
  steer: { label: "queue.steer.label", explanation: "queue.steer.explanation", hint: "queue.steer.hint" },
  followup: {
    label: "queue.followup.label",
    explanation: "queue.followup.explanation",
    hint: "queue.followup.hint",
  },
  collect: {
    label: "queue.collect.label",
    explanation: "queue.collect.explanation",
    hint: "queue.collect.hint",
  },
  interrupt: {
    label: "queue.interrupt.label",
    explanation: "queue.interrupt.explanation",
    hint: "queue.interrupt.hint",
  },
};

/** The chat's mode: its own, else steer in direct chats and collect in groups. */
export function queueModeOf(channel: Pick<ChannelRecord, "kind" | "queueMode">): QueueMode {
  return channel.queueMode ?? defaultQueueMode(channel.kind);
}

/** The mode of a chat that has not chosen one. */
export function defaultQueueMode(kind: ChannelRecord["kind"]): QueueMode {
  return kind === "group" ? "collect" : "steer";
}

/**
 * The composer's hint while agents of the chat work (undefined when none does): who works and what
 * a message sent now does; when all of them wait for approval, that it waits too.
 */
export function composerHint(
  channel: Pick<ChannelRecord, "kind" | "queueMode">,
  working: readonly Pick<TeamRun, "agentId" | "status">[],
  nameOf: (agentId: string) => string,
): { text: string; waiting: boolean } | undefined {
  if (working.length === 0) return undefined;
  const agentIds = [...new Set(working.map((r) => r.agentId))];
  const one = agentIds.length === 1;
  const who = one ? nameOf(agentIds[0] as string) : "";
  const count = agentIds.length;
  if (working.every((r) => r.status === "waiting")) {
    return { text: one ? t("queue.waitsOne", { who }) : t("queue.waitsMany", { count }), waiting: true };
  }
  // Esc (useStopOnEscape) stops the answers and what was sent to them meanwhile.
  const hint = t(QUEUE_MODE_INFO[queueModeOf(channel)].hint);
  return {
    text: one ? t("queue.answeringOne", { who, hint }) : t("queue.answeringMany", { count, hint }),
    waiting: false,
  };
}
