/**
 * The turn context: what a run learns for its user message (recalled memories, skills named or
 * matched, open todos) travels as a message of its own right after that user message, is stored with
 * the run's first step and stays in the history afterwards. So it never changes the system prompt and
 * every later request of the conversation repeats it verbatim: the cached prefix only grows.
 * Requests carry it folded into the user message before it (one user message, as every protocol and
 * chat template accepts); people never see it (`isTurnContext` filters it from transcripts).
 */
import type { Message, TextPart, UserMessage } from "../llm/types.js";
import { renderTurnLayers, type TurnLayers } from "./layered-context.js";

const OPEN = "<turn-context>";
const CLOSE = "</turn-context>";
const PREFACE = "Context for the message above, added by the system (the person did not write it):";

/** The stored message carrying a turn's context text. */
export function turnContextMessage(text: string): UserMessage {
  return { role: "user", content: [{ type: "text", text: `${OPEN}\n${PREFACE}\n\n${text}\n${CLOSE}` }] };
}

/** Whether a stored message is a turn context rather than something a person wrote. */
export function isTurnContext(message: Message): boolean {
  if (message.role !== "user") return false;
  const first = typeof message.content === "string" ? message.content : message.content[0];
  const text = typeof first === "string" ? first : first?.type === "text" ? first.text : undefined;
  return text?.startsWith(OPEN) === true;
}

function partsOf(message: UserMessage): Exclude<UserMessage["content"], string> {
  return typeof message.content === "string"
    ? [{ type: "text", text: message.content } satisfies TextPart]
    : message.content;
}

/** Merges each turn context into the user message right before it; other messages pass unchanged. */
export function foldTurnContext(messages: Message[]): Message[] {
  if (!messages.some(isTurnContext)) return messages;
  const out: Message[] = [];
  for (const message of messages) {
    const previous = out.at(-1);
    if (message.role === "user" && isTurnContext(message) && previous?.role === "user") {
      out[out.length - 1] = { role: "user", content: [...partsOf(previous), ...partsOf(message)] };
    } else {
      out.push(message);
    }
  }
  return out;
}

function textOf(message: Message): string {
  if (typeof message.content === "string") return message.content;
  return message.content.map((p) => (p.type === "text" ? p.text : "")).join("\n");
}

/**
 * The turn layers without what the conversation's live turn contexts already say: memories recalled
 * before (by id) and an unchanged todo list. Turn contexts stay in the history, so repeating them
 * would only grow every later request.
 */
export function newToConversation(layers: TurnLayers, live: ReadonlyArray<{ message: Message }>): TurnLayers {
  const earlier = live.filter((m) => isTurnContext(m.message)).map((m) => textOf(m.message));
  if (earlier.length === 0) return layers;
  const out: TurnLayers = { ...layers };
  const seen = earlier.join("\n");
  if (layers.memories) out.memories = layers.memories.filter((m) => !seen.includes(` #${m.id}] `));
  const todos = layers.todos ? renderTurnLayers({ todos: layers.todos }) : undefined;
  const lastTodos = [...earlier].reverse().find((t) => t.includes("# Open todos"));
  if (todos && lastTodos?.includes(todos)) delete out.todos;
  return out;
}
