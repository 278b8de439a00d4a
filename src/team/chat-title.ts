/**
 * A direct chat's title from its first exchange: one short call to the agent's model ("a title of at
 * most six words"), or the first words of the question when there is no model or it does not answer
 * in time. Pure apart from the one call.
 */
import { stream as streamModel } from "../llm/providers.js";
import type { ModelSpec, StreamFunction, StreamOptions } from "../llm/types.js";

/** Longest title kept (the channel name allows 100 characters). */
export const MAX_TITLE = 60;
const TITLE_TIMEOUT_MS = 15_000;
const FIRST_WORDS = 6;

/** The first words of a message, without Markdown and mentions, as a title. */
export function firstWordsTitle(text: string): string {
  const words = text
    .replace(/```[\s\S]*?```/g, " ")
    .replace(/(^|\s)@[\w-]+/g, " ")
    .replace(/[#*_`>[\]()~|]/g, " ")
    .split(/\s+/)
    .filter((w) => w !== "");
  const title = words.slice(0, FIRST_WORDS).join(" ");
  const cut = title.length > MAX_TITLE ? `${title.slice(0, MAX_TITLE - 1).trimEnd()}…` : title;
  return cut === "" ? "New chat" : `${cut[0]?.toUpperCase() ?? ""}${cut.slice(1)}`;
}

/** What the model answered, cleaned into a title (quotes, a "Title:" lead, a full stop removed); undefined if unusable. */
export function cleanTitle(raw: string): string | undefined {
  const line = raw
    .trim()
    .split("\n")[0]
    ?.replace(/^(title|chat title)\s*:\s*/i, "")
    .replace(/[.\s]+$/, "")
    .replace(/^["'“”‘’*#\s]+|["'“”‘’*\s]+$/g, "")
    .replace(/[.\s]+$/, "")
    .trim();
  if (!line || line.length > MAX_TITLE) return undefined;
  return line;
}

const INSTRUCTION =
  "Write a title of at most six words for the conversation below, in the language of the question. " +
  "Answer with the title only: no quotes, no full stop.";

/** The title of a chat whose first question (and answer, if any) is given. Never throws. */
export async function chatTitle(
  question: string,
  answer: string | undefined,
  model: ModelSpec | undefined,
  options: { stream?: StreamFunction; streamOptions?: Omit<StreamOptions, "signal"> } = {},
): Promise<string> {
  if (!model) return firstWordsTitle(question);
  const text = `Question: ${question.slice(0, 2000)}${answer ? `\n\nAnswer: ${answer.slice(0, 2000)}` : ""}`;
  const signal = AbortSignal.timeout(TITLE_TIMEOUT_MS);
  let out = "";
  try {
    const call = options.stream ?? streamModel;
    for await (const event of call(
      model,
      { system: INSTRUCTION, messages: [{ role: "user", content: [{ type: "text", text }] }] },
      { ...options.streamOptions, signal },
    )) {
      if (event.type === "text_delta") out += event.text;
      else if (event.type === "error") return firstWordsTitle(question);
    }
  } catch {
    return firstWordsTitle(question);
  }
  return cleanTitle(out) ?? firstWordsTitle(question);
}
