/**
 * The turn context: what a run learns for its user message (recalled memories, skills named or
 * matched, open todos) travels as a message of its own right after that user message, is stored with
 * the run's first step and stays in the history afterwards. So it never changes the system prompt and
 * every later request of the conversation repeats it verbatim: the cached prefix only grows.
 * Requests carry it folded into the user message before it (one user message, as every protocol and
 * chat template accepts); people never see it (`isTurnContext` filters it from transcripts).
 */
import type { Message, TextPart, UserMessage } from "../llm/types.js";

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
