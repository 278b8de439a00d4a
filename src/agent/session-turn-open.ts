/**
 * The first phase of a session turn: open the session and either resume a run from its stored
 * checkpoint (with the approval decisions recorded) or begin a fresh turn with the user's input.
 */
import { DimsumError } from "../errors.js";
import type { Message, ModelSpec, UserMessage } from "../llm/types.js";
import type { BeginTurnInput, SessionRef, SessionStore, StoredMessage } from "../store/types.js";
import type { TodoItem } from "../tools/types.js";
import type { ApprovalDecision } from "./approvals.js";
import { parseCheckpoint, type RunCheckpoint } from "./checkpoint.js";
import type { LiveMessage } from "./compactor.js";
import { emptyUsage } from "./usage.js";

export interface OpenTurnInput {
  store: SessionStore;
  ref: SessionRef;
  model: ModelSpec;
  input: UserMessage["content"];
  resume?: { reason: "approval" | "restart"; decisions?: Record<string, ApprovalDecision> };
}

/** The turn as opened: its live messages, the session summary, the todos read and what it resumes. */
export interface OpenedTurn {
  live: LiveMessage[];
  summary: string | undefined;
  /** The todos read with the last write, for the next context; read again when there are none. */
  todos: TodoItem[] | undefined;
  resume: { checkpoint: RunCheckpoint; reason: "approval" | "restart" } | undefined;
}

/** Resume: the session opened and the run resumed from its checkpoint, or the fresh turn begun. */
export async function openTurn(options: OpenTurnInput, runId: string, title: string): Promise<OpenedTurn> {
  const { store, ref, model } = options;
  if (options.resume) {
    const session = await store.openSession(ref, { title });
    const live = (await store.loadMessages(ref)).map((m) => ({ id: m.id, message: m.message }));
    const checkpoint = await loadResumable(
      store,
      ref,
      runId,
      live,
      options.resume.decisions,
      options.resume.reason === "restart",
    );
    // Running again: a crash from here on is one a restart resumes.
    await store.saveCheckpoint(ref, runId, checkpoint);
    return {
      live,
      summary: session.summary,
      todos: undefined,
      resume: { checkpoint, reason: options.resume.reason },
    };
  }
  const userMessage: Message = { role: "user", content: options.input };
  const begun = await beginTurn(store, ref, {
    title,
    message: userMessage,
    run: { runId, model: `${model.provider}:${model.id}`, prompt: textOf(options.input) },
  });
  const live: LiveMessage[] = begun.messages.map((m) => ({ id: m.id, message: m.message }));
  live.push({ id: begun.appended?.id, message: userMessage });
  return { live, summary: begun.summary, todos: begun.todos, resume: undefined };
}

/**
 * The start of a fresh turn: the session (opened, with `title`), its live messages before the input,
 * the input stored and the run started, and the todos; in one write where the store has `beginTurn`.
 */
async function beginTurn(
  store: SessionStore,
  ref: SessionRef,
  input: BeginTurnInput,
): Promise<{ summary?: string; messages: StoredMessage[]; appended?: StoredMessage; todos?: TodoItem[] }> {
  if (store.beginTurn) {
    const begun = await store.beginTurn(ref, input);
    return { ...begun, ...(begun.session.summary !== undefined ? { summary: begun.session.summary } : {}) };
  }
  const session = await store.openSession(ref, input.title === undefined ? {} : { title: input.title });
  const messages = await store.loadMessages(ref);
  const [appended] = await store.appendMessages(ref, input.run.runId, [input.message]);
  await store.startRun(ref, input.run);
  return {
    messages,
    ...(appended ? { appended } : {}),
    ...(session.summary !== undefined ? { summary: session.summary } : {}),
  };
}

/**
 * The stored checkpoint of a run to resume, with `decisions` recorded. A turn whose results already
 * reached the history (the process died after storing them, before the checkpoint moved on) is done.
 */
async function loadResumable(
  store: SessionStore,
  ref: SessionRef,
  runId: string,
  live: LiveMessage[],
  decisions: Record<string, ApprovalDecision> | undefined,
  restart: boolean,
): Promise<RunCheckpoint> {
  const stored = await store.loadCheckpoint(ref, runId);
  // A run that died in its first model call has no checkpoint yet: it starts that call again.
  const checkpoint =
    parseCheckpoint(stored?.checkpoint) ??
    (restart && (await store.getRun(ref, runId))?.status === "running" ? freshCheckpoint() : undefined);
  if (!checkpoint) {
    throw new DimsumError("internal", `Run ${runId} has no checkpoint to continue from.`, {
      hint: "ask again: the run cannot be resumed",
    });
  }
  const turn = checkpoint.turn;
  if (turn) {
    const answered = new Set(live.flatMap((m) => (m.message.role === "tool" ? [m.message.toolCallId] : [])));
    const ids = turn.message.content.flatMap((p) => (p.type === "tool_call" ? [p.id] : []));
    if (ids.length > 0 && ids.every((id) => answered.has(id))) {
      const { turn: _done, ...rest } = checkpoint;
      return rest;
    }
    if (decisions) turn.decisions = { ...turn.decisions, ...decisions };
  }
  return checkpoint;
}

function freshCheckpoint(): RunCheckpoint {
  return {
    version: 1,
    iteration: 0,
    usage: emptyUsage(),
    calls: [],
  };
}

export function textOf(content: UserMessage["content"]): string {
  return typeof content === "string"
    ? content
    : content.map((p) => (p.type === "text" ? p.text : "")).join(" ");
}

export function titleFrom(content: UserMessage["content"]): string {
  const text = textOf(content).replace(/\s+/g, " ").trim();
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}
