/** Converts canonical messages into Anthropic's alternating user/assistant message list. */
import { fileAsText, isPdf } from "../file-parts.js";
import type { AssistantMessage, ImagePart, Message, ToolResultMessage, UserContentPart } from "../types.js";
import type {
  AnthropicAssistantBlock,
  AnthropicDocumentBlock,
  AnthropicImageBlock,
  AnthropicMessage,
  AnthropicTextBlock,
  AnthropicToolResultBlock,
  AnthropicUserBlock,
} from "./wire-types.js";

/** Tool-use ids must match `^[a-zA-Z0-9_-]+$`; ids minted by other providers may not. */
function safeToolId(id: string): string {
  const cleaned = id.replace(/[^a-zA-Z0-9_-]/g, "_");
  return cleaned === "" ? "toolu_empty" : cleaned;
}

/** Parses tool-call arguments; invalid or non-object JSON becomes `{}` (the loop already reported it). */
function parseToolInput(args: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(args);
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      return value as Record<string, unknown>;
    }
  } catch {
    // fall through: the call is echoed with empty input so the history stays well-formed
  }
  return {};
}

function imageBlock(part: ImagePart): AnthropicImageBlock {
  return { type: "image", source: { type: "base64", media_type: part.mimeType, data: part.data } };
}

/** Text, image and document blocks; empty text is dropped because the API rejects empty text blocks. */
function contentBlocks(
  content: string | UserContentPart[],
): Array<AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock> {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  const blocks: Array<AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock> = [];
  for (const part of content) {
    if (part.type === "image") blocks.push(imageBlock(part));
    else if (part.type === "file") {
      if (isPdf(part)) {
        blocks.push({
          type: "document",
          source: { type: "base64", media_type: "application/pdf", data: part.data },
          title: part.name,
        });
      } else blocks.push(fileAsText(part));
    } else if (part.text !== "") blocks.push({ type: "text", text: part.text });
  }
  return blocks;
}

/** Tool results carry text and images only (the type says so); documents are a user's. */
function resultBlocks(
  content: ToolResultMessage["content"],
): Array<AnthropicTextBlock | AnthropicImageBlock> {
  return contentBlocks(content).filter(
    (b): b is AnthropicTextBlock | AnthropicImageBlock => b.type !== "document",
  );
}

function toolResultBlock(message: ToolResultMessage): AnthropicToolResultBlock {
  const block: AnthropicToolResultBlock = {
    type: "tool_result",
    tool_use_id: safeToolId(message.toolCallId),
  };
  if (typeof message.content === "string") {
    if (message.content !== "") block.content = message.content;
  } else {
    const blocks = resultBlocks(message.content);
    if (blocks.length > 0) block.content = blocks;
  }
  if (message.isError) block.is_error = true;
  return block;
}

/**
 * Assistant blocks in their original order. Reasoning is sent back only when Anthropic signed it
 * (or redacted it): unsigned reasoning came from another provider and would be rejected.
 */
function assistantBlocks(message: AssistantMessage): AnthropicAssistantBlock[] {
  const blocks: AnthropicAssistantBlock[] = [];
  for (const part of message.content) {
    if (part.type === "reasoning") {
      if (part.redactedData !== undefined)
        blocks.push({ type: "redacted_thinking", data: part.redactedData });
      else if (part.signature)
        blocks.push({ type: "thinking", thinking: part.text, signature: part.signature });
    } else if (part.type === "text") {
      if (part.text !== "") blocks.push({ type: "text", text: part.text });
    } else {
      blocks.push({
        type: "tool_use",
        id: safeToolId(part.id),
        name: part.name,
        input: parseToolInput(part.arguments),
      });
    }
  }
  return blocks;
}

/** Appends blocks to the last message when it has the same role, since the API requires alternation. */
function append(out: AnthropicMessage[], next: AnthropicMessage): void {
  if (next.content.length === 0) return;
  const last = out.at(-1);
  if (last?.role === "user" && next.role === "user") last.content.push(...next.content);
  else if (last?.role === "assistant" && next.role === "assistant") last.content.push(...next.content);
  else out.push(next);
}

/**
 * Builds the `messages` array. System messages are not part of it: see `systemPrompt`.
 * Tool results become `tool_result` blocks of a user message, so all results of one turn (and any
 * user text that follows them) share one message, results first.
 */
export function toAnthropicMessages(messages: Message[]): AnthropicMessage[] {
  const out: AnthropicMessage[] = [];
  for (const message of messages) {
    if (message.role === "system") continue;
    if (message.role === "user") {
      const content: AnthropicUserBlock[] = contentBlocks(message.content);
      append(out, { role: "user", content });
    } else if (message.role === "tool") {
      append(out, { role: "user", content: [toolResultBlock(message)] });
    } else {
      append(out, { role: "assistant", content: assistantBlocks(message) });
    }
  }
  return out;
}

/**
 * The top-level `system` text. Anthropic has no system role inside `messages`, so system messages
 * found in the history are folded into it, in order, after `context.system`.
 */
export function systemPrompt(system: string | undefined, messages: Message[]): string | undefined {
  const texts = [system, ...messages.filter((m) => m.role === "system").map((m) => m.content)].filter(
    (t): t is string => t !== undefined && t !== "",
  );
  return texts.length === 0 ? undefined : texts.join("\n\n");
}
