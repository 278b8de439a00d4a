/**
 * The open channel's conversation: messages (unique by id, oldest first), the runs streaming into it
 * (text, reasoning and tool calls per run id, so concurrent agents never mix), and its flows. Pure
 * reducer plus selectors; the WebSocket and HTTP layers only dispatch.
 */
import type { ChannelMessage, FlowRecord, PostResult, RunStatus, TeamEvent, TeamRun } from "../types.js";

export interface ToolCallView {
  callId: string;
  name: string;
  args: unknown;
  status: "running" | "ok" | "error";
  output?: string;
  durationMs?: number;
}

export interface RunView {
  id: string;
  /** Undefined while only stream events of a run that started before we subscribed have arrived. */
  run: TeamRun | undefined;
  text: string;
  reasoning: string;
  tools: ToolCallView[];
}

export interface ChatState {
  channelId: string;
  messages: ChannelMessage[];
  runs: Record<string, RunView>;
  flows: Record<string, FlowRecord>;
  /** History has been loaded over HTTP at least once. */
  loaded: boolean;
  /** Older messages may exist before the first one held. */
  hasOlder: boolean;
}

export type ChatAction =
  /** A page from HTTP; `hasOlder` is set by pages taken from the oldest end (undefined keeps it). */
  | { type: "history"; channelId: string; messages: ChannelMessage[]; hasOlder?: boolean }
  | { type: "backlog"; channelId: string; messages: ChannelMessage[] }
  | { type: "event"; event: TeamEvent }
  | { type: "run"; run: TeamRun }
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
  const current = state.runs[runId] ?? { id: runId, run: undefined, text: "", reasoning: "", tools: [] };
  return { ...state, runs: { ...state.runs, [runId]: update(current) } };
}

function upsertRun(state: ChatState, run: TeamRun): ChatState {
  if (run.channelId !== state.channelId) return state;
  return withRun(state, run.id, (view) => {
    // Events and HTTP responses can race; a run never goes back (finished to live, running to queued).
    if (view.run && (isTerminal(view.run.status) || run.status === "queued") && !isTerminal(run.status))
      return view;
    return { ...view, run };
  });
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
      return { ...state, messages: mergeMessages(state.messages, [event.message]) };
    case "message_deleted":
      return { ...state, messages: state.messages.filter((m) => m.id !== event.messageId) };
    case "run":
      return upsertRun(state, event.run);
    case "delta":
      return withRun(state, event.runId, (view) => ({ ...view, text: view.text + event.text }));
    case "reasoning":
      return withRun(state, event.runId, (view) => ({ ...view, reasoning: view.reasoning + event.text }));
    case "tool_start":
      return withRun(state, event.runId, (view) =>
        view.tools.some((t) => t.callId === event.callId)
          ? view
          : {
              ...view,
              tools: [
                ...view.tools,
                { callId: event.callId, name: event.name, args: event.args, status: "running" },
              ],
            },
      );
    case "tool_end":
      return withRun(state, event.runId, (view) => {
        const ended: ToolCallView = {
          callId: event.callId,
          name: event.name,
          args: view.tools.find((t) => t.callId === event.callId)?.args,
          status: event.ok ? "ok" : "error",
          output: event.output,
          durationMs: event.durationMs,
        };
        const known = view.tools.some((t) => t.callId === event.callId);
        return {
          ...view,
          tools: known
            ? view.tools.map((t) => (t.callId === event.callId ? ended : t))
            : [...view.tools, ended],
        };
      });
    case "flow":
      return upsertFlow(state, event.flow);
    case "channel":
      return state;
  }
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
      return upsertRun(state, action.run);
    case "flow":
      return upsertFlow(state, action.flow);
    case "posted": {
      if (action.channelId !== state.channelId) return state;
      let next: ChatState = { ...state, messages: mergeMessages(state.messages, [action.result.message]) };
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

/** Runs not yet represented by a stored message: shown as live bubbles after the messages. */
export function liveRuns(state: ChatState): RunView[] {
  const stored = new Set<string>();
  for (const message of state.messages) if (message.runId) stored.add(message.runId);
  return Object.values(state.runs)
    .filter((view) => !stored.has(view.id))
    .sort(
      (a, b) => (a.run?.startedAt ?? Number.MAX_SAFE_INTEGER) - (b.run?.startedAt ?? Number.MAX_SAFE_INTEGER),
    );
}

/** Runs still queued or running (what the stop buttons act on; refreshed after a reconnect). */
export function activeRuns(state: ChatState): RunView[] {
  return Object.values(state.runs).filter((view) => !isTerminal(view.run?.status));
}

/** The flow to show in the flow panel: the most recently updated one. */
export function currentFlow(state: ChatState): FlowRecord | undefined {
  let best: FlowRecord | undefined;
  for (const flow of Object.values(state.flows)) if (!best || flow.updatedAt >= best.updatedAt) best = flow;
  return best;
}
