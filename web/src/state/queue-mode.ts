/**
 * What happens to a message sent while an agent of the chat is working (the chat's queue mode): the
 * words the chat settings and the composer use for each mode, and which mode a chat has.
 */
import type { ChannelRecord, QueueMode, TeamRun } from "../types.js";

export const QUEUE_MODES: readonly QueueMode[] = ["steer", "followup", "collect", "interrupt"];

export interface QueueModeInfo {
  /** The choice in the chat settings. */
  label: string;
  /** One line under it. */
  explanation: string;
  /** The composer's hint while an agent works: what sending now does. */
  hint: string;
}

export const QUEUE_MODE_INFO: Record<QueueMode, QueueModeInfo> = {
  steer: {
    label: "Add it to the running answer",
    explanation: "The agent reads your message before its next step and takes it into account.",
    hint: "your message will reach the agent at its next step, or be answered right after this answer",
  },
  followup: {
    label: "Answer it afterwards",
    explanation: "The current answer finishes undisturbed; then the agent answers your message.",
    hint: "your message will be answered after the current answer",
  },
  collect: {
    label: "Collect messages into one answer",
    explanation: "Messages sent meanwhile are gathered and answered together, once the agent is free.",
    hint: "your message will be answered together with the others sent meanwhile",
  },
  interrupt: {
    label: "Stop and answer again",
    explanation: "Sending stops the current answer; the agent answers everything again from there.",
    hint: "your message will stop the current answer",
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
  const who = agentIds.length === 1 ? nameOf(agentIds[0] as string) : `${agentIds.length} agents`;
  if (working.every((r) => r.status === "waiting")) {
    const waits = agentIds.length === 1 ? "waits" : "wait";
    return {
      text: `${who} ${waits} for approval: your message will wait until it is decided.`,
      waiting: true,
    };
  }
  const verb = agentIds.length === 1 ? "is answering" : "are answering";
  // Esc (useStopOnEscape) stops the answers and what was sent to them meanwhile.
  return {
    text: `${who} ${verb}: ${QUEUE_MODE_INFO[queueModeOf(channel)].hint}. Esc stops it all.`,
    waiting: false,
  };
}
