/**
 * Phase: fit the attachments of the conversation to the model before a call. Images older than
 * `keepImagesTurns` of the person's turns become a short placeholder naming the file; a model that
 * does not read PDFs gets their extracted text; a model that does not read images is refused the
 * images of the newest message (with a model that can read them named) and gets placeholders for
 * older ones and for images tools returned. The stored conversation is left as it was.
 */
import { createHash } from "node:crypto";
import { parsePdf } from "../attachments/pdf-text.js";
import { imageModelFor } from "../config/model-catalog.js";
import { DimsumError } from "../errors.js";
import { fencedFile, isPdf } from "../llm/file-parts.js";
import type { FilePart, ImagePart, Message, ModelSpec, TextPart, UserContentPart } from "../llm/types.js";

export interface FitOptions {
  /** Person turns whose images are sent as images (default 3); older ones become placeholders. */
  keepImagesTurns?: number;
  signal?: AbortSignal;
}

export const DEFAULT_KEEP_IMAGES_TURNS = 3;

/** The messages as this model can take them; the same array when nothing had to change. */
export async function fitAttachments(
  messages: readonly Message[],
  model: ModelSpec,
  options: FitOptions = {},
): Promise<Message[]> {
  const keep = options.keepImagesTurns ?? DEFAULT_KEEP_IMAGES_TURNS;
  const readsImages = model.input?.images !== false;
  const readsPdf = model.input?.pdf === true;
  const newest = lastPersonMessage(messages);
  // The index of the first message of the oldest person turn whose images are kept.
  const keepFrom = personTurnStart(messages, keep);
  let changed = false;
  const out: Message[] = [];
  for (const [index, message] of messages.entries()) {
    if ((message.role !== "user" && message.role !== "tool") || typeof message.content === "string") {
      out.push(message);
      continue;
    }
    const old = index < keepFrom;
    const parts: UserContentPart[] = [];
    let touched = false;
    for (const part of message.content) {
      if (part.type === "image") {
        if (!readsImages && index === newest) throw refusal(model, part);
        if (old || !readsImages) {
          const why = old ? "older than the last turns" : "this model cannot read images";
          parts.push(placeholder(part, why, message.role === "tool" ? message.toolName : undefined));
          touched = true;
          continue;
        }
      } else if (part.type === "file" && isPdf(part) && !readsPdf) {
        parts.push(await pdfAsText(part, options.signal));
        touched = true;
        continue;
      }
      parts.push(part);
    }
    if (!touched) {
      out.push(message);
      continue;
    }
    changed = true;
    out.push(
      message.role === "user"
        ? { ...message, content: parts }
        : { ...message, content: parts.filter((p): p is TextPart | ImagePart => p.type !== "file") },
    );
  }
  return changed ? out : (messages as Message[]);
}

/** The index of the newest message a person wrote (tool results are not theirs), or -1. */
function lastPersonMessage(messages: readonly Message[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === "user") return i;
  return -1;
}

/** Where the `turns`-th newest person turn starts; 0 when there are fewer (everything is kept). */
function personTurnStart(messages: readonly Message[], turns: number): number {
  if (turns <= 0) return messages.length;
  let seen = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === "user" && ++seen === turns) return i;
  }
  return 0;
}

/** Names the image: its file name, else the tool that returned it and its type. */
function placeholder(part: ImagePart, why: string, tool: string | undefined): TextPart {
  const what = part.name ? part.name : tool ? `from ${tool} (${part.mimeType})` : `(${part.mimeType})`;
  return { type: "text", text: `[image ${what} left out: ${why}]` };
}

function refusal(model: ModelSpec, part: ImagePart): DimsumError {
  const name = `${model.provider}:${model.id}`;
  return new DimsumError("invalid", `${name} cannot read images${part.name ? ` (${part.name})` : ""}`, {
    hint: `choose a model that can, for example ${imageModelFor(model.provider)}, or send the image's content as text`,
  });
}

// Extracted texts by content, so a PDF kept in a conversation is parsed once per process, not per call.
const extracted = new Map<string, string>();
const MAX_CACHED = 32;

async function pdfAsText(part: FilePart, signal?: AbortSignal): Promise<TextPart> {
  const key = createHash("sha256").update(part.data).digest("hex");
  let text = extracted.get(key);
  if (text === undefined) {
    const doc = await parsePdf(Buffer.from(part.data, "base64"), part.name, signal);
    const pages: string[] = [];
    for (const block of doc.blocks) {
      const page = block.page ?? 1;
      pages[page - 1] = pages[page - 1] === undefined ? block.text : `${pages[page - 1]}\n\n${block.text}`;
    }
    text = pages
      .map((body, i) => (doc.pages && doc.pages > 1 ? `[page ${i + 1}]\n${body ?? ""}` : (body ?? "")))
      .join("\n\n");
    if (extracted.size >= MAX_CACHED) extracted.delete(extracted.keys().next().value as string);
    extracted.set(key, text);
  }
  return { type: "text", text: fencedFile(part.name, part.mimeType, text) };
}
