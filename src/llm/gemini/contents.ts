/** Converts canonical messages into Gemini `contents` (roles `user` and `model`). */
import { fileAsText, isPdf } from "../file-parts.js";
import type {
  AssistantMessage,
  FilePart,
  ImagePart,
  Message,
  TextPart,
  ToolResultMessage,
  UserContentPart,
} from "../types.js";
import type { GeminiContent, GeminiPart } from "./wire-types.js";

/**
 * Google's documented stand-in for a function call that has no thought signature of its own (history
 * from another provider, or written by hand). Gemini 3 rejects unsigned calls in the current turn.
 */
export const SKIP_SIGNATURE = "skip_thought_signature_validator";

/** Parses tool-call arguments; invalid or non-object JSON becomes `{}` (the loop already reported it). */
function parseArgs(args: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(args);
    if (value !== null && typeof value === "object" && !Array.isArray(value))
      return value as Record<string, unknown>;
  } catch {
    // fall through: the call is echoed with empty args so the history stays well-formed
  }
  return {};
}

function inline(part: ImagePart | FilePart): GeminiPart {
  return { inlineData: { mimeType: part.mimeType, data: part.data } };
}

/** Text, image and PDF parts; empty text is dropped because Gemini rejects empty parts in user content. */
function userParts(content: string | UserContentPart[]): GeminiPart[] {
  if (typeof content === "string") return content === "" ? [] : [{ text: content }];
  return content.flatMap((p): GeminiPart[] => {
    if (p.type === "image") return [inline(p)];
    if (p.type === "file") return isPdf(p) ? [inline(p)] : [{ text: fileAsText(p).text }];
    return p.text === "" ? [] : [{ text: p.text }];
  });
}

/**
 * Model parts in their original order. Reasoning parts are not sent: Gemini never needs its thought
 * text back, and a reasoning signature is Anthropic's (Gemini's own signatures ride on text parts and
 * tool calls). Parts keep their `thoughtSignature` exactly where Gemini put it.
 */
function modelParts(message: AssistantMessage): GeminiPart[] {
  const parts: GeminiPart[] = [];
  let firstCall: GeminiPart | undefined;
  let anySigned = false;
  for (const part of message.content) {
    if (part.type === "text") {
      if (part.text === "" && !part.signature) continue;
      const out: GeminiPart = { text: part.text };
      if (part.signature) out.thoughtSignature = part.signature;
      parts.push(out);
    } else if (part.type === "tool_call") {
      const out: GeminiPart = { functionCall: { name: part.name, args: parseArgs(part.arguments) } };
      if (part.signature) {
        out.thoughtSignature = part.signature;
        anySigned = true;
      }
      firstCall ??= out;
      parts.push(out);
    }
  }
  // Gemini signs only the first call of a parallel batch, so one stand-in on the first call suffices.
  if (firstCall && !anySigned) firstCall.thoughtSignature = SKIP_SIGNATURE;
  return parts;
}

function resultText(message: ToolResultMessage): string {
  if (typeof message.content === "string") return message.content;
  return message.content
    .filter((p): p is TextPart => p.type === "text")
    .map((p) => p.text)
    .join("\n");
}

/** A functionResponse part, followed by the result's images as inline data. */
function toolParts(message: ToolResultMessage): GeminiPart[] {
  const text = resultText(message);
  const response = message.isError ? { error: text } : { result: text };
  const images = typeof message.content === "string" ? [] : message.content.filter((p) => p.type === "image");
  return [{ functionResponse: { name: message.toolName, response } }, ...images.map(inline)];
}

/** Function responses first: Gemini pairs them with the calls by position. */
function responsesFirst(parts: GeminiPart[]): GeminiPart[] {
  if (!parts.some((p) => p.functionResponse)) return parts;
  return [...parts.filter((p) => p.functionResponse), ...parts.filter((p) => !p.functionResponse)];
}

/**
 * Builds `contents`. Consecutive same-role contents are merged, so all results of one turn (and any
 * user text after them) form one `user` content. System messages go to `systemInstruction` instead.
 */
export function toGeminiContents(messages: Message[]): GeminiContent[] {
  const out: GeminiContent[] = [];
  for (const message of messages) {
    if (message.role === "system") continue;
    const role = message.role === "assistant" ? "model" : "user";
    const parts =
      message.role === "assistant"
        ? modelParts(message)
        : message.role === "tool"
          ? toolParts(message)
          : userParts(message.content);
    if (parts.length === 0) continue;
    const last = out.at(-1);
    if (last?.role === role) last.parts.push(...parts);
    else out.push({ role, parts });
  }
  for (const content of out) if (content.role === "user") content.parts = responsesFirst(content.parts);
  return out;
}

/** The system instruction text: `context.system` then any system messages of the history, in order. */
export function systemInstructionText(system: string | undefined, messages: Message[]): string | undefined {
  const texts = [system, ...messages.filter((m) => m.role === "system").map((m) => m.content)].filter(
    (t): t is string => t !== undefined && t !== "",
  );
  return texts.length === 0 ? undefined : texts.join("\n\n");
}
