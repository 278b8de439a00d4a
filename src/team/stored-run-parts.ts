/**
 * The parts of an answer whose process died before it stored them: rebuilt from what the session kept
 * of the run (each step's assistant message and tool results, written with its checkpoint) and from
 * the turn that was open (the checkpoint's assistant message, its calls still running). A resumed
 * answer starts from these, and an answer given up after too many restarts is posted with them, so
 * the chat shows every tool call that really ran ("History is the record").
 */
import { parseCheckpoint } from "../agent/checkpoint.js";
import type { AssistantMessage, ToolResultMessage } from "../llm/types.js";
import type { SessionRef, SessionStore, StoredMessage } from "../store/types.js";
import type { MessagePart } from "./types.js";

type ToolPart = Extract<MessagePart, { type: "tool" }>;

/** The parts the session and the checkpoint of `runId` show, in the order they happened. */
export async function readStoredRunParts(
  sessions: SessionStore,
  ref: SessionRef,
  runId: string,
): Promise<MessagePart[]> {
  const [messages, stored] = await Promise.all([
    sessions.loadMessages(ref, { includeCompacted: true }),
    sessions.loadCheckpoint(ref, runId),
  ]);
  const open = parseCheckpoint(stored?.checkpoint)?.turn;
  return storedRunParts(messages, runId, open ? { message: open.message, results: open.results } : undefined);
}

/** See `readStoredRunParts`: the parts of the run's stored messages, then of its open turn. */
export function storedRunParts(
  messages: readonly StoredMessage[],
  runId: string,
  open?: { message: AssistantMessage; results: readonly ToolResultMessage[] },
): MessagePart[] {
  let parts: MessagePart[] = [];
  const seen = new Set<string>();
  for (const stored of messages) {
    if (stored.runId !== runId) continue;
    const { message } = stored;
    if (message.role === "assistant") parts = withAssistant(parts, message, seen);
    else if (message.role === "tool") parts = withResult(parts, message);
  }
  if (open) {
    parts = withAssistant(parts, open.message, seen);
    for (const result of open.results) parts = withResult(parts, result);
  }
  return parts;
}

/**
 * The parts of a message posted before (an answer that waited for approval, with its decisions), then
 * what the session shows happened after it.
 */
export function mergeStoredParts(
  posted: readonly MessagePart[],
  rebuilt: readonly MessagePart[],
): MessagePart[] {
  if (posted.length === 0) return [...rebuilt];
  const known = new Set(posted.flatMap((p) => (p.type === "tool" ? [p.callId] : [])));
  let last = -1;
  rebuilt.forEach((p, i) => {
    if (p.type === "tool" && known.has(p.callId)) last = i;
  });
  // Nothing of the posted message in the session (it had no tool calls): it already shows all.
  if (last < 0) return [...posted];
  const after = rebuilt.slice(last + 1).filter((p) => !(p.type === "tool" && known.has(p.callId)));
  return [...posted, ...after];
}

function withAssistant(parts: MessagePart[], message: AssistantMessage, seen: Set<string>): MessagePart[] {
  const next = [...parts];
  let first = true;
  for (const block of message.content) {
    if (block.type === "text" || block.type === "reasoning") {
      if (block.text.trim() === "") continue;
      const last = next[next.length - 1];
      // Each model turn's text is a paragraph of its own, as the live answer shows it.
      if (last?.type === block.type) {
        next[next.length - 1] = { type: block.type, text: `${last.text}${first ? "\n\n" : ""}${block.text}` };
      } else {
        next.push({ type: block.type, text: block.text });
      }
      first = false;
      continue;
    }
    if (seen.has(block.id)) continue;
    seen.add(block.id);
    next.push({
      type: "tool",
      callId: block.id,
      name: block.name,
      args: argsOf(block.arguments),
      status: "running",
    });
  }
  return next;
}

function withResult(parts: MessagePart[], result: ToolResultMessage): MessagePart[] {
  const output = typeof result.content === "string" ? result.content : textOf(result.content);
  const status: ToolPart["status"] = result.isError ? "error" : "ok";
  const index = parts.findIndex((p) => p.type === "tool" && p.callId === result.toolCallId);
  if (index < 0) {
    return [
      ...parts,
      { type: "tool", callId: result.toolCallId, name: result.toolName, args: undefined, status, output },
    ];
  }
  return parts.map((p, i) => (i === index && p.type === "tool" ? { ...p, status, output } : p));
}

function textOf(content: Exclude<ToolResultMessage["content"], string>): string {
  return content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

function argsOf(text: string): unknown {
  try {
    return JSON.parse(text === "" ? "{}" : text);
  } catch {
    return text;
  }
}
