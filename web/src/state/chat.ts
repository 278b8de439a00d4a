/**
 * The open channel's conversation: messages (unique by id, oldest first), the runs streaming into it
 * (text, reasoning and tool calls per run id, so concurrent agents never mix), and its flows. Pure
 * reducer plus selectors; the WebSocket and HTTP layers only dispatch.
 */

import type { AgentEvent } from "../../../src/agent/events.js";
import {
  applyAgentEvent,
  decideApproval,
  endPartOf,
  endParts,
  failurePart,
  startChildRun,
  updateChildRun,
} from "../../../src/team/message-parts.js";
import { t } from "../i18n/index.js";
import type {
  ChannelMessage,
  ElicitationView,
  FlowRecord,
  MeetingRecord,
  MessagePart,
  PostResult,
  QueuedDelivery,
  RunStatus,
  TeamEvent,
  TeamRun,
} from "../types.js";

export type ToolCallView = Extract<MessagePart, { type: "tool" }>;

export interface RunView {
  id: string;
  /** Undefined while only stream events of a run that started before we subscribed have arrived. */
  run: TeamRun | undefined;
  /** What the run said so far, folded from its agent events exactly as the server stores them. */
  parts: MessagePart[];
  /** The latest retry the agent reported while the model call failed (cleared by further output). */
  retry?: { attempt: number; reason: string };
  /** Tokens so far (the agent's `usage` events). */
  usage?: { input: number; output: number };
  /** The number of the last agent event folded in (0: none). */
  seq?: number;
  /**
   * The latest agent events of a live run, so a snapshot from `getRun` (taken at some event number)
   * can be brought up to date with what arrived meanwhile.
   */
  recent?: Array<{ seq: number; event: AgentEvent }>;
}

/** How many recent events a live run keeps for catching up with a snapshot. */
const RECENT_EVENTS = 400;

export interface ChatState {
  channelId: string;
  messages: ChannelMessage[];
  runs: Record<string, RunView>;
  flows: Record<string, FlowRecord>;
  /** History has been loaded over HTTP at least once. */
  loaded: boolean;
  /** Older messages may exist before the first one held. */
  hasOlder: boolean;
  /** Open MCP requests for input put to this person, by id. */
  elicitations?: Record<string, ElicitationView>;
  /**
   * Messages this person posted that reached agents without a new run (sent to a run in progress,
   * collected, or waiting behind an approval), by message id; an entry goes once the agent answers.
   */
  queued?: Record<number, QueuedDelivery[]>;
  /** Ended runs of the channel by id: each answer's model, tokens, cost and duration. */
  answerRuns?: Record<string, TeamRun>;
  /** The channel's latest meeting seen (live, for the meeting bar). */
  meeting?: MeetingRecord;
}

export type ChatAction =
  /** A page from HTTP; `hasOlder` is set by pages taken from the oldest end (undefined keeps it). */
  | { type: "history"; channelId: string; messages: ChannelMessage[]; hasOlder?: boolean }
  | { type: "backlog"; channelId: string; messages: ChannelMessage[] }
  | { type: "event"; event: TeamEvent }
  | { type: "run"; run: TeamRun }
  | { type: "answer_runs"; channelId: string; runs: TeamRun[] }
  | { type: "flow"; flow: FlowRecord }
  | { type: "posted"; channelId: string; result: PostResult };

const TERMINAL: ReadonlySet<RunStatus> = new Set(["done", "error", "cancelled"]);

/** Whether a run has finished one way or another. */
export function isTerminal(status: RunStatus | undefined): boolean {
  return status !== undefined && TERMINAL.has(status);
}

/** A fresh, empty conversation for a channel. */
export function emptyChat(channelId: string): ChatState {
  return { channelId, messages: [], runs: {}, flows: {}, loaded: false, hasOlder: false };
}

/** Messages of both lists, unique by id (the newer copy wins), oldest first. */
export function mergeMessages(existing: ChannelMessage[], incoming: ChannelMessage[]): ChannelMessage[] {
  if (incoming.length === 0) return existing;
  const last = existing[existing.length - 1];
  // Fast path for the common case: strictly newer messages in order (live events).
  let appendOnly = true;
  let previous = last?.id ?? Number.NEGATIVE_INFINITY;
  for (const message of incoming) {
    if (message.id <= previous) {
      appendOnly = false;
      break;
    }
    previous = message.id;
  }
  if (appendOnly) return [...existing, ...incoming];
  const byId = new Map<number, ChannelMessage>();
  for (const message of existing) byId.set(message.id, message);
  for (const message of incoming) byId.set(message.id, message);
  return [...byId.values()].sort((a, b) => a.id - b.id);
}

function withRun(state: ChatState, runId: string, update: (view: RunView) => RunView): ChatState {
  const current = state.runs[runId] ?? { id: runId, run: undefined, parts: [] };
  return { ...state, runs: { ...state.runs, [runId]: update(current) } };
}

function upsertRun(state: ChatState, run: TeamRun): ChatState {
  if (run.channelId !== state.channelId) return state;
  let next = withRun(state, run.id, (view) => {
    // Events and HTTP responses can race; a run never goes back (finished to live, running to queued).
    if (view.run && (isTerminal(view.run.status) || run.status === "queued") && !isTerminal(run.status))
      return view;
    let parts = view.parts;
    // A run that failed before its agent said why (e.g. no model) ends with the run's error.
    if ((run.status === "error" || run.status === "cancelled") && !endPartOf(parts)) {
      parts = endParts(
        parts,
        failurePart(
          run.status === "cancelled" ? "aborted" : "failed",
          run.error ?? t("state.runEnded", { status: run.status }),
        ),
      );
    }
    const next: RunView = { ...view, run, parts };
    if (run.live) caughtUp(next, run.live);
    if (isTerminal(run.status)) delete next.recent;
    return next;
  });
  next = settleQueued(next, run, state.runs[run.id]?.run?.status);
  const parentId = run.parentRunId;
  if (parentId !== undefined) {
    // A called agent's card sits in its caller's answer, where the call happened.
    next = withRun(next, parentId, (view) => {
      const placed = startChildRun(view.parts, run.id, run.agentId);
      return { ...view, parts: updateChildRun(placed, run.id, run.status) };
    });
  }
  return next;
}

/**
 * Drops the "queued" labels a run answers: a new run of the agent for the message (or a later one),
 * and, once the agent's run that waited for approval goes on, the messages that waited behind it.
 */
function settleQueued(state: ChatState, run: TeamRun, before: RunStatus | undefined): ChatState {
  if (!state.queued || run.parentRunId !== undefined) return state;
  const resumed = before === "waiting" && run.status !== "waiting";
  // A stopped answer takes with it the messages sent to it (the server starts no run for them).
  const stopped = run.status === "cancelled";
  let changed = false;
  const queued: Record<number, QueuedDelivery[]> = {};
  for (const [key, entries] of Object.entries(state.queued)) {
    const messageId = Number(key);
    const kept = entries.filter(
      (entry) =>
        entry.agentId !== run.agentId ||
        (run.triggerMessageId < messageId &&
          !(resumed && entry.mode === "waiting") &&
          !(stopped && entry.mode === "steer")),
    );
    if (kept.length !== entries.length) changed = true;
    if (kept.length > 0) queued[messageId] = kept;
  }
  return changed ? { ...state, queued } : state;
}

/** A stored answer's approval cards say whose approval they wait for; live parts learn it from there. */
function adoptAskedOf(parts: MessagePart[], stored: readonly MessagePart[]): MessagePart[] {
  const askedOf = new Map<string, string>();
  for (const p of stored) {
    if (p.type === "tool" && p.approval?.askedOf) askedOf.set(p.callId, p.approval.askedOf);
  }
  if (askedOf.size === 0) return parts;
  let changed = false;
  const next = parts.map((p) => {
    if (p.type !== "tool" || !p.approval || p.approval.askedOf) return p;
    const who = askedOf.get(p.callId);
    if (!who) return p;
    changed = true;
    return { ...p, approval: { ...p.approval, askedOf: who } };
  });
  return changed ? next : parts;
}

/** A stored message's edit (e.g. its approval cards decided), passed on to its run's live parts. */
function storedMessage(state: ChatState, message: ChannelMessage): ChatState {
  const next = { ...state, messages: mergeMessages(state.messages, [message]) };
  const view = message.runId !== undefined ? state.runs[message.runId] : undefined;
  if (!view || view.parts.length === 0) return next;
  const parts = adoptAskedOf(view.parts, message.parts);
  return parts === view.parts ? next : { ...next, runs: { ...next.runs, [view.id]: { ...view, parts } } };
}

/** A decision on a call a run waited on (or its expiry): its card, live and stored, says so. */
function decided(state: ChatState, event: Extract<TeamEvent, { type: "approval" }>): ChatState {
  const decision = {
    state: event.state,
    ...(event.by ? { by: event.by } : {}),
    ...(event.always ? { always: true } : {}),
    ...(event.note ? { note: event.note } : {}),
  };
  let next = state;
  const view = state.runs[event.runId];
  if (view) {
    next = withRun(next, event.runId, (v) => ({
      ...v,
      parts: decideApproval(v.parts, event.callId, decision),
    }));
  }
  if (state.messages.some((m) => m.runId === event.runId)) {
    next = {
      ...next,
      messages: next.messages.map((m) =>
        m.runId === event.runId ? { ...m, parts: decideApproval(m.parts, event.callId, decision) } : m,
      ),
    };
  }
  return next;
}

/**
 * Starts a live run's parts from a snapshot and applies the events after it that already arrived;
 * keeps the parts as they are when those events are not all at hand (or the snapshot is older).
 */
function caughtUp(view: RunView, live: { parts: MessagePart[]; seq: number }): void {
  const seen = view.seq ?? 0;
  const after = (view.recent ?? []).filter((r) => r.seq > live.seq);
  if (seen > live.seq && after.length !== seen - live.seq) return;
  let parts = live.parts;
  for (const r of after) parts = applyAgentEvent(parts, r.event);
  view.parts = parts;
  view.seq = Math.max(seen, live.seq);
}

/**
 * A run that waited for approval posted its answer so far; when its later events arrive on a page
 * that did not see the earlier ones (opened while it waited), they go on from that stored answer.
 */
function resumedFrom(state: ChatState, view: RunView): RunView {
  if (view.seq !== undefined || view.parts.length > 0) return view;
  const stored = state.messages.find((m) => m.runId === view.id && m.author.type === "agent");
  return stored ? { ...view, parts: stored.parts } : view;
}

/**
 * A run that a new server process took over after a restart goes on from its stored answer (as the
 * server's own copy does), not from what the page saw the dead process stream past its checkpoint;
 * the events the page kept of the old process (numbered below the new ones) are no base for a snapshot.
 */
function restartedFrom(state: ChatState, view: RunView): RunView {
  const stored = state.messages.find((m) => m.runId === view.id && m.author.type === "agent");
  const { recent: _old, ...rest } = view;
  return { ...rest, parts: stored ? stored.parts : [] };
}

function applyAgent(view: RunView, event: AgentEvent, seq: number): RunView {
  // A repeat of an event already folded in (a snapshot covered it) changes nothing.
  if (view.seq !== undefined && seq <= view.seq) return view;
  const recent = isTerminal(view.run?.status) ? undefined : [...(view.recent ?? []), { seq, event }];
  const next: RunView = { ...view, parts: applyAgentEvent(view.parts, event), seq };
  // An agent that says something is running, whatever lifecycle event came last (or late).
  if (next.run?.status === "queued") next.run = { ...next.run, status: "running" };
  if (recent) next.recent = recent.length > RECENT_EVENTS ? recent.slice(-RECENT_EVENTS) : recent;
  if (event.type === "retry") next.retry = { attempt: event.attempt, reason: event.reason };
  else if (event.type === "text_delta" || event.type === "reasoning_delta" || event.type === "tool_call") {
    delete next.retry;
  }
  if (event.type === "usage")
    next.usage = { input: event.total.inputTokens, output: event.total.outputTokens };
  return next;
}

function upsertFlow(state: ChatState, flow: FlowRecord): ChatState {
  if (flow.channelId !== state.channelId) return state;
  const current = state.flows[flow.id];
  if (current && current.updatedAt > flow.updatedAt) return state;
  return { ...state, flows: { ...state.flows, [flow.id]: flow } };
}

function applyEvent(state: ChatState, event: TeamEvent): ChatState {
  if (event.channelId !== state.channelId) return state;
  switch (event.type) {
    case "message":
      return storedMessage(state, event.message);
    case "message_deleted":
      return { ...state, messages: state.messages.filter((m) => m.id !== event.messageId) };
    case "run":
      return withAnswerRuns(upsertRun(state, event.run), [event.run]);
    case "agent": {
      const restarted = event.event.type === "resumed" && event.event.reason === "restart";
      return withRun(state, event.runId, (view) => {
        if (view.seq !== undefined && event.seq <= view.seq) return view;
        const base = restarted ? restartedFrom(state, view) : resumedFrom(state, view);
        return applyAgent(base, event.event, event.seq);
      });
    }
    case "approval":
      return decided(state, event);
    case "flow":
      return upsertFlow(state, event.flow);
    case "channel":
    case "budget_notice":
      return state;
    case "meeting":
      return state.meeting &&
        state.meeting.id === event.meeting.id &&
        state.meeting.updatedAt > event.meeting.updatedAt
        ? state
        : { ...state, meeting: event.meeting };
    case "elicitation":
      return { ...state, elicitations: { ...state.elicitations, [event.request.id]: event.request } };
    case "elicitation_closed": {
      if (!state.elicitations?.[event.id]) return state;
      const { [event.id]: _closed, ...rest } = state.elicitations;
      return { ...state, elicitations: rest };
    }
  }
}

/** Keeps the ended runs (model, usage, cost) of the open channel for the answers' details. */
function withAnswerRuns(state: ChatState, runs: readonly TeamRun[]): ChatState {
  const ended = runs.filter((r) => r.channelId === state.channelId && isTerminal(r.status));
  if (ended.length === 0) return state;
  const answerRuns = { ...state.answerRuns };
  for (const run of ended) answerRuns[run.id] = run;
  return { ...state, answerRuns };
}

/** The chat reducer: every state change of the open conversation goes through here. */
export function chatReducer(state: ChatState, action: ChatAction): ChatState {
  switch (action.type) {
    case "history":
      if (action.channelId !== state.channelId) return state;
      return {
        ...state,
        messages: mergeMessages(state.messages, action.messages),
        loaded: true,
        hasOlder: action.hasOlder ?? state.hasOlder,
      };
    case "backlog":
      if (action.channelId !== state.channelId) return state;
      return { ...state, messages: mergeMessages(state.messages, action.messages) };
    case "event":
      return applyEvent(state, action.event);
    case "run":
      return withAnswerRuns(upsertRun(state, action.run), [action.run]);
    case "answer_runs":
      if (action.channelId !== state.channelId) return state;
      return withAnswerRuns(state, action.runs);
    case "flow":
      return upsertFlow(state, action.flow);
    case "posted": {
      if (action.channelId !== state.channelId) return state;
      let next: ChatState = { ...state, messages: mergeMessages(state.messages, [action.result.message]) };
      const queued = action.result.queued ?? [];
      if (queued.length > 0)
        next = { ...next, queued: { ...next.queued, [action.result.message.id]: queued } };
      for (const run of action.result.runs) next = upsertRun(next, run);
      if (action.result.flow) next = upsertFlow(next, action.result.flow);
      return next;
    }
  }
}

/** The newest message id held, the `since` for a (re)subscription. */
export function lastMessageId(state: ChatState): number | undefined {
  return state.messages[state.messages.length - 1]?.id;
}

/** The oldest message id held, the `before` for loading earlier history. */
export function firstMessageId(state: ChatState): number | undefined {
  return state.messages[0]?.id;
}

/** Runs not yet represented by a stored message (called agents show inside their caller's answer). */
export function liveRuns(state: ChatState): RunView[] {
  const stored = new Set<string>();
  for (const message of state.messages) if (message.runId) stored.add(message.runId);
  return Object.values(state.runs)
    .filter((view) => !stored.has(view.id) && view.run?.parentRunId === undefined)
    .sort(
      (a, b) => (a.run?.startedAt ?? Number.MAX_SAFE_INTEGER) - (b.run?.startedAt ?? Number.MAX_SAFE_INTEGER),
    );
}

/** One row of the conversation: a message with its versions (regenerated answers), or a live run. */
export type ChatItem =
  | { kind: "message"; key: string; versions: ChannelMessage[] }
  | { kind: "run"; key: string; view: RunView };

/**
 * The conversation in reading order: an answer right after the message it replies to (even when a
 * later message was sent while it ran), regenerated answers as versions of the first, and live runs
 * after what their trigger already got; everything else in id order.
 */
export function chatItems(state: ChatState): ChatItem[] {
  const present = new Set(state.messages.map((m) => m.id));
  const groups = new Map<number, ChannelMessage[]>();
  for (const message of state.messages) {
    const head =
      message.versionOf !== undefined && present.has(message.versionOf) ? message.versionOf : message.id;
    const group = groups.get(head);
    if (group) group.push(message);
    else groups.set(head, [message]);
  }
  const keyed: Array<{ sort: [number, number, number]; item: ChatItem }> = [];
  for (const [head, versions] of groups) {
    const first = versions[0] as ChannelMessage;
    const anchor = first.replyTo !== undefined && present.has(first.replyTo) ? first.replyTo : undefined;
    keyed.push({
      sort: anchor !== undefined ? [anchor, 1, head] : [head, 0, 0],
      item: { kind: "message", key: `m${head}`, versions },
    });
  }
  const bottom = Number.MAX_SAFE_INTEGER;
  for (const view of liveRuns(state)) {
    const run = view.run;
    const anchored = run !== undefined && run.flowId === undefined && present.has(run.triggerMessageId);
    keyed.push({
      sort: anchored ? [run.triggerMessageId, 1, bottom] : [bottom, 1, run?.startedAt ?? bottom],
      item: { kind: "run", key: `r${view.id}`, view },
    });
  }
  keyed.sort((x, y) => x.sort[0] - y.sort[0] || x.sort[1] - y.sort[1] || x.sort[2] - y.sort[2]);
  return keyed.map((k) => k.item);
}

/** The id of the actor's last message in the conversation (the one they may edit). */
export function lastOwnMessageId(state: ChatState, userId: string): number | undefined {
  for (let i = state.messages.length - 1; i >= 0; i--) {
    const m = state.messages[i];
    if (m?.author.type === "user" && m.author.id === userId && !scheduleOf(m)) return m.id;
  }
  return undefined;
}

/** The schedule that posted a message in its creator's name, if one did. */
export function scheduleOf(message: ChannelMessage): { scheduleId: string; name: string } | undefined {
  const part = message.parts.find((p) => p.type === "scheduled");
  return part?.type === "scheduled" ? { scheduleId: part.scheduleId, name: part.name } : undefined;
}

/** The run of a stored answer while it still goes on (it waits for approval, or resumed after). */
export function activeRunOf(state: ChatState, message: ChannelMessage): RunView | undefined {
  const view = message.runId !== undefined ? state.runs[message.runId] : undefined;
  return view?.run && !isTerminal(view.run.status) ? view : undefined;
}

/** Runs still queued, running or waiting (what the stop buttons act on; refreshed after a reconnect). */
export function activeRuns(state: ChatState): RunView[] {
  return Object.values(state.runs).filter((view) => !isTerminal(view.run?.status));
}

/** The flow to show in the flow panel: the most recently updated one. */
export function currentFlow(state: ChatState): FlowRecord | undefined {
  let best: FlowRecord | undefined;
  for (const flow of Object.values(state.flows)) if (!best || flow.updatedAt >= best.updatedAt) best = flow;
  return best;
}
