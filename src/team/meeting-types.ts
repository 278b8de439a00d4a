/**
 * Meetings in a group: agents speak round by round on a topic, people may interject, and a
 * moderator closes with minutes. The record is saved after every statement, so a restarted server
 * resumes at the speaker it was at.
 */

/** `running`: speakers take turns; `closing`: the moderator writes the minutes; then it ended. */
export type MeetingStatus = "running" | "closing" | "done" | "stopped" | "error";

/** What the meeting may spend at most, in tokens (input and output) and/or USD. */
export interface MeetingBudget {
  tokens?: number;
  costUsd?: number;
}

/** The decision's shape: free text, or one of the given options. */
export type DecisionShape = { kind: "free" } | { kind: "choice"; options: string[] };

/** One participant's statement, as posted in the group. */
export interface MeetingStatement {
  round: number;
  agentId: string;
  messageId: number;
  runId: string;
}

export interface MinutesOption {
  option: string;
  for: string[];
  against: string[];
}

export interface MinutesActionItem {
  task: string;
  /** `@agent` or a person's name. */
  owner: string;
  /** A date (YYYY-MM-DD) or words such as "next week". */
  due: string;
}

/** The moderator's minutes, validated against `minutesSchema`. */
export interface MeetingMinutes {
  /** The decision, or null for no decision. */
  decision: string | null;
  /** Why this decision, or why none was reached. */
  reason: string;
  options: MinutesOption[];
  dissent: Array<{ who: string; why: string }>;
  actionItems: MinutesActionItem[];
  openQuestions: string[];
}

export interface MeetingRecord {
  id: string;
  channelId: string;
  topic: string;
  /** Agent ids, in speaking order. */
  participants: string[];
  rounds: number;
  moderatorId: string;
  budget?: MeetingBudget;
  decision: DecisionShape;
  status: MeetingStatus;
  /** The round being spoken (1-based). */
  round: number;
  /** Index in `participants` of the speaker whose turn it is. */
  speaker: number;
  statements: MeetingStatement[];
  /** What the meeting spent so far (statements and minutes). */
  usage: { tokens: number; costUsd: number };
  /** The person's message that started it; the meeting's messages come after it. */
  startMessageId: number;
  /** The run of the turn in progress (a speaker's or the minutes'). */
  currentRunId?: string;
  minutes?: MeetingMinutes;
  /** The message that shows the minutes as a card. */
  minutesMessageId?: number;
  /** Why it ended as it did (budget spent, ended early by a person, stopped, failed). */
  note?: string;
  createdBy: string;
  createdAt: number;
  updatedAt: number;
  endedAt?: number;
}

/** What a person gives to start a meeting (the form, or `/meeting <topic>` with the defaults). */
export interface MeetingInput {
  topic: string;
  /** Default: every agent of the group. */
  participants?: string[];
  /** Default 2. */
  rounds?: number;
  /** Default: the group's leader (else the first participant). */
  moderatorId?: string;
  budget?: MeetingBudget;
  decision?: DecisionShape;
}

/** A person's action on a meeting in progress. */
export type MeetingAction =
  /** Close now with minutes of what was said. */
  | { action: "end" }
  /** One more round. */
  | { action: "more" }
  /** Stop without minutes. */
  | { action: "stop" };
