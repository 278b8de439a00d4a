/** Converts canonical messages to `messages` rows and back. Content is stored as JSON, verbatim. */
import type { AssistantMessage, Message, ToolResultMessage, UserMessage } from "../llm/types.js";

export interface MessageColumns {
  role: Message["role"];
  contentJson: string;
  toolCallId: string | null;
  toolName: string | null;
  /** NULL keeps "not set" apart from an explicit `false`, so messages round-trip exactly. */
  isError: number | null;
}

export interface MessageRow {
  id: number;
  seq: number;
  run_id: string | null;
  role: string;
  content_json: string;
  tool_call_id: string | null;
  tool_name: string | null;
  is_error: number | null;
  created_at: number;
  tokens_estimate: number | null;
  compacted: number;
}

/** Splits a message into the columns the `messages` table keeps. */
export function messageToColumns(message: Message): MessageColumns {
  const base = { role: message.role, contentJson: JSON.stringify(message.content) };
  if (message.role !== "tool") return { ...base, toolCallId: null, toolName: null, isError: null };
  return {
    ...base,
    toolCallId: message.toolCallId,
    toolName: message.toolName,
    isError: message.isError === undefined ? null : Number(message.isError),
  };
}

function isPartArray(value: unknown): value is Array<{ type: string }> {
  return (
    Array.isArray(value) &&
    value.every(
      (p) => typeof p === "object" && p !== null && typeof (p as { type?: unknown }).type === "string",
    )
  );
}

/** Rebuilds the message a row holds; throws a plain Error naming the problem when the row is unusable. */
export function rowToMessage(row: MessageRow): Message {
  const content: unknown = JSON.parse(row.content_json);
  switch (row.role) {
    case "system":
      if (typeof content !== "string") throw new Error("system content is not a string");
      return { role: "system", content };
    case "user":
      if (typeof content !== "string" && !isPartArray(content))
        throw new Error("user content is not text or parts");
      return { role: "user", content: content as UserMessage["content"] };
    case "assistant":
      if (!isPartArray(content)) throw new Error("assistant content is not a list of parts");
      return { role: "assistant", content: content as AssistantMessage["content"] };
    case "tool": {
      if (typeof content !== "string" && !isPartArray(content))
        throw new Error("tool content is not text or parts");
      if (row.tool_call_id === null || row.tool_name === null)
        throw new Error("tool result lacks its call id or name");
      const message: ToolResultMessage = {
        role: "tool",
        toolCallId: row.tool_call_id,
        toolName: row.tool_name,
        content: content as ToolResultMessage["content"],
      };
      if (row.is_error !== null) message.isError = row.is_error !== 0;
      return message;
    }
    default:
      throw new Error(`unknown role "${row.role}"`);
  }
}
