/** Converts canonical messages into Chat Completions `messages`. */
import { dataUrl, fileAsText, isPdf } from "../file-parts.js";
import type { AssistantMessage, Message, ToolResultMessage, UserContentPart, UserMessage } from "../types.js";

export type OpenAiContentPart =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string } }
  | { type: "file"; file: { filename: string; file_data: string } };

export interface OpenAiToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export type OpenAiMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | OpenAiContentPart[] }
  | { role: "assistant"; content: string | null; tool_calls?: OpenAiToolCall[]; reasoning_content?: string }
  | { role: "tool"; tool_call_id: string; content: string };

export interface MessageOptions {
  /** Send reasoning parts back as `reasoning_content` (DeepSeek needs it on tool-call turns). */
  sendReasoning: boolean;
}

/** Translates a system prompt and canonical messages, in order, into Chat Completions messages. */
export function toOpenAiMessages(
  system: string | undefined,
  messages: Message[],
  opts: MessageOptions,
): OpenAiMessage[] {
  const out: OpenAiMessage[] = [];
  if (system) out.push({ role: "system", content: system });
  // Tool messages cannot carry images, and nothing may sit between an assistant's tool_calls and their
  // results, so images from a run of tool results wait here and follow the run as one user message.
  let pendingImages: OpenAiContentPart[] = [];
  const flushImages = () => {
    if (pendingImages.length > 0) out.push({ role: "user", content: pendingImages });
    pendingImages = [];
  };
  for (const message of messages) {
    if (message.role !== "tool") flushImages();
    switch (message.role) {
      case "system":
        out.push({ role: "system", content: message.content });
        break;
      case "user":
        out.push(userMessage(message));
        break;
      case "assistant":
        out.push(assistantMessage(message, opts));
        break;
      case "tool": {
        const { content, images } = toolResult(message);
        out.push({ role: "tool", tool_call_id: message.toolCallId, content });
        pendingImages.push(...images);
        break;
      }
    }
  }
  flushImages();
  return out;
}

function userMessage(message: UserMessage): OpenAiMessage {
  if (typeof message.content === "string") return { role: "user", content: message.content };
  // Text-only content goes as a plain string: several compatible servers reject part arrays without images.
  const parts = message.content.map(contentPart);
  if (parts.every((p) => p.type === "text")) {
    return { role: "user", content: parts.map((p) => p.text).join("\n") };
  }
  return { role: "user", content: parts };
}

function assistantMessage(message: AssistantMessage, opts: MessageOptions): OpenAiMessage {
  let text = "";
  let reasoning = "";
  const calls: OpenAiToolCall[] = [];
  for (const part of message.content) {
    if (part.type === "text") text += part.text;
    else if (part.type === "reasoning") reasoning += part.text;
    else {
      const args = part.arguments.trim() === "" ? "{}" : part.arguments;
      calls.push({ id: part.id, type: "function", function: { name: part.name, arguments: args } });
    }
  }
  const out: OpenAiMessage = { role: "assistant", content: text === "" && calls.length > 0 ? null : text };
  if (calls.length > 0) out.tool_calls = calls;
  if (opts.sendReasoning && reasoning !== "") out.reasoning_content = reasoning;
  return out;
}

function toolResult(message: ToolResultMessage): { content: string; images: OpenAiContentPart[] } {
  if (typeof message.content === "string") return { content: message.content, images: [] };
  const lines: string[] = [];
  const images: OpenAiContentPart[] = [];
  for (const part of message.content) {
    if (part.type === "text") {
      lines.push(part.text);
      continue;
    }
    lines.push(`[image: ${part.mimeType}, ${Buffer.byteLength(part.data, "base64")} bytes]`);
    if (images.length === 0) {
      images.push({
        type: "text",
        text: `Image from tool ${message.toolName} (call ${message.toolCallId}):`,
      });
    }
    images.push(contentPart(part));
  }
  return { content: lines.join("\n"), images };
}

function contentPart(part: UserContentPart): OpenAiContentPart {
  if (part.type === "text") return { type: "text", text: part.text };
  if (part.type === "image")
    return { type: "image_url", image_url: { url: dataUrl(part.mimeType, part.data) } };
  if (isPdf(part)) {
    return { type: "file", file: { filename: part.name, file_data: dataUrl(part.mimeType, part.data) } };
  }
  return { type: "text", text: fileAsText(part).text };
}
