/**
 * Sampling served by the agent's own model: an MCP server's `sampling/createMessage` becomes one
 * completion (text in, text out, no tools). The front end decides whether to allow it.
 */
import type { Message, ModelSpec, StreamFunction } from "../llm/types.js";
import type { SamplingCompletion, SamplingRequest } from "../tools/types.js";

/** Runs `params` on `model`; rejects with the provider's error. */
export async function sampleWithModel(
  model: ModelSpec,
  stream: StreamFunction,
  params: SamplingRequest,
  signal: AbortSignal,
): Promise<SamplingCompletion> {
  const messages: Message[] = params.messages.map((m) => {
    const text = textOf(m.content);
    return m.role === "assistant"
      ? { role: "assistant", content: [{ type: "text", text }] }
      : { role: "user", content: text };
  });
  const context = { messages, ...(params.systemPrompt ? { system: params.systemPrompt } : {}) };
  let text = "";
  let stopReason: string = "endTurn";
  for await (const event of stream(model, context, {
    signal,
    maxTokens: params.maxTokens,
    toolChoice: "none",
    ...(params.temperature !== undefined ? { temperature: params.temperature } : {}),
  })) {
    if (event.type === "text_delta") text += event.text;
    else if (event.type === "error") throw event.error;
    else if (event.type === "done" && event.finishReason === "length") stopReason = "maxTokens";
  }
  return { role: "assistant", content: { type: "text", text }, model: model.id, stopReason };
}

/** The text of one sampling message's content (images and audio as placeholders). */
export function textOf(content: unknown): string {
  const blocks = Array.isArray(content) ? content : [content];
  return blocks
    .map((b) => {
      const block = b as { type?: string; text?: string; mimeType?: string };
      return block.type === "text"
        ? (block.text ?? "")
        : `[${block.type ?? "content"}: ${block.mimeType ?? ""}]`;
    })
    .join("\n");
}
