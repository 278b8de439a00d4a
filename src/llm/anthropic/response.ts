/** Converts a non-streaming Messages response body into the same ModelEvents a stream would give. */
import { DimsumError } from "../../errors.js";
import type { SseEvent } from "../adapter.js";
import type { ModelEvent } from "../types.js";
import { anthropicStreamError } from "./errors.js";
import { AnthropicStreamParser } from "./parser.js";
import type { AnthropicResponseBody, AnthropicStreamEvent, AnthropicWireBlock } from "./wire-types.js";

function sse(payload: AnthropicStreamEvent): SseEvent {
  return { event: payload.type, data: JSON.stringify(payload) };
}

/** The start/delta/stop events that would have streamed one content block. */
function blockEvents(index: number, block: AnthropicWireBlock): AnthropicStreamEvent[] {
  const stop: AnthropicStreamEvent = { type: "content_block_stop", index };
  const delta = (d: AnthropicStreamEvent["delta"]): AnthropicStreamEvent => ({
    type: "content_block_delta",
    index,
    delta: d,
  });
  switch (block.type) {
    case "text":
      return [
        { type: "content_block_start", index, content_block: { type: "text", text: "" } },
        delta({ type: "text_delta", text: block.text ?? "" }),
        stop,
      ];
    case "thinking":
      return [
        { type: "content_block_start", index, content_block: { type: "thinking", thinking: "" } },
        delta({ type: "thinking_delta", thinking: block.thinking ?? "" }),
        delta({ type: "signature_delta", signature: block.signature ?? "" }),
        stop,
      ];
    case "tool_use":
      return [
        {
          type: "content_block_start",
          index,
          content_block: { type: "tool_use", id: block.id, name: block.name },
        },
        delta({ type: "input_json_delta", partial_json: JSON.stringify(block.input ?? {}) }),
        stop,
      ];
    default:
      return [{ type: "content_block_start", index, content_block: block }, stop];
  }
}

/**
 * Converts a complete Messages response (parsed JSON or its text) into ModelEvents ending with
 * `done`, or `error` for an error body. It replays the body through the stream parser, so both
 * paths produce identical messages, usage and finish reasons.
 */
export function parseMessagesResponse(body: unknown): ModelEvent[] {
  let response: AnthropicResponseBody & { type?: string; error?: { type?: string; message?: string } };
  try {
    response = (typeof body === "string" ? JSON.parse(body) : body) as typeof response;
  } catch {
    const error = new DimsumError("provider_unavailable", "The Anthropic response body is not JSON.", {
      hint: "Check that the base URL points at the Messages API and not at a web page or proxy error.",
    });
    return [{ type: "error", error }];
  }
  if (response === null || typeof response !== "object") {
    const error = new DimsumError(
      "provider_unavailable",
      "The Anthropic response body is not a JSON object.",
      {
        hint: "Check that the base URL points at the Messages API.",
      },
    );
    return [{ type: "error", error }];
  }
  if (response.type === "error") return [{ type: "error", error: anthropicStreamError(response.error) }];

  const events: AnthropicStreamEvent[] = [
    { type: "message_start", message: { id: response.id, model: response.model, usage: response.usage } },
    ...(response.content ?? []).flatMap((block, index) => blockEvents(index, block)),
    {
      type: "message_delta",
      delta: { stop_reason: response.stop_reason ?? null, stop_details: response.stop_details ?? null },
      usage: { output_tokens: response.usage?.output_tokens ?? null },
    },
    { type: "message_stop" },
  ];
  const parser = new AnthropicStreamParser();
  const out: ModelEvent[] = [];
  for (const event of events) out.push(...parser.push(sse(event)));
  out.push(...parser.finish());
  return out;
}
