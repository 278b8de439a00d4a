/** Anthropic Messages shapes for the fake server, modelled on the recorded streams. */
import type { FinishReason } from "../llm/types.js";
import { argsObject, argsText, fakeSignature, hasToolCalls, sseFrame } from "./fake-llm-encoders.js";
import type { FakeReply, ProtocolEncoder, ReplyContext } from "./fake-llm-types.js";

const STOP_REASONS: Record<FinishReason, string> = {
  stop: "end_turn",
  length: "max_tokens",
  tool_calls: "tool_use",
  content_filter: "refusal",
  refusal: "refusal",
  error: "end_turn",
  other: "end_turn",
};

const ERROR_TYPES: Record<number, string> = {
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  529: "overloaded_error",
};

/** Anthropic counts cache reads and writes apart from `input_tokens`. */
function inputUsage(ctx: ReplyContext) {
  const read = ctx.usage.cached ?? 0;
  const written = ctx.usage.cacheWrite ?? 0;
  return {
    input_tokens: Math.max(0, ctx.usage.input - read - written),
    cache_creation_input_tokens: written,
    cache_read_input_tokens: read,
  };
}

function stopReason(reply: FakeReply): string {
  return STOP_REASONS[reply.finishReason ?? (hasToolCalls(reply) ? "tool_calls" : "stop")];
}

function toolId(ctx: ReplyContext, index: number, given: string | undefined): string {
  return given ?? `toolu_fake_${ctx.seq}_${index}`;
}

/** Each SSE event is `event: <type>` plus the payload, whose `type` repeats the event name. */
function frame(payload: { type: string; [field: string]: unknown }): string {
  return sseFrame(payload, payload.type);
}

export const anthropicEncoder: ProtocolEncoder = {
  stream(ctx) {
    const { reply, split } = ctx;
    const frames: string[] = [
      frame({
        type: "message_start",
        message: {
          id: `msg_fake_${ctx.seq}`,
          type: "message",
          role: "assistant",
          model: ctx.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...inputUsage(ctx), output_tokens: 1 },
        },
      }),
    ];
    let index = 0;
    const block = (start: object, deltas: object[]) => {
      frames.push(frame({ type: "content_block_start", index, content_block: start }));
      // Real streams send a ping after the first block opens; parsers must skip it.
      if (index === 0) frames.push(frame({ type: "ping" }));
      for (const delta of deltas) frames.push(frame({ type: "content_block_delta", index, delta }));
      frames.push(frame({ type: "content_block_stop", index }));
      index++;
    };
    if (reply.reasoning) {
      block({ type: "thinking", thinking: "", signature: "" }, [
        ...split(reply.reasoning).map((thinking) => ({ type: "thinking_delta", thinking })),
        { type: "signature_delta", signature: fakeSignature("thinking", ctx.seq, index) },
      ]);
    }
    if (reply.text) {
      block(
        { type: "text", text: "" },
        split(reply.text).map((text) => ({ type: "text_delta", text })),
      );
    }
    (reply.toolCalls ?? []).forEach((call, i) => {
      // The first input_json_delta is empty in recorded streams.
      const pieces = ["", ...split(argsText(call))];
      block(
        { type: "tool_use", id: toolId(ctx, i, call.id), name: call.name, input: {} },
        pieces.map((partial_json) => ({ type: "input_json_delta", partial_json })),
      );
    });
    frames.push(
      frame({
        type: "message_delta",
        delta: { stop_reason: stopReason(reply), stop_sequence: null },
        usage: { ...inputUsage(ctx), output_tokens: ctx.usage.output },
      }),
      frame({ type: "message_stop" }),
    );
    return frames;
  },

  json(ctx) {
    const { reply } = ctx;
    const content: object[] = [];
    if (reply.reasoning) {
      content.push({
        type: "thinking",
        thinking: reply.reasoning,
        signature: fakeSignature("thinking", ctx.seq, 0),
      });
    }
    if (reply.text) content.push({ type: "text", text: reply.text });
    (reply.toolCalls ?? []).forEach((call, i) => {
      content.push({
        type: "tool_use",
        id: toolId(ctx, i, call.id),
        name: call.name,
        input: argsObject(call),
      });
    });
    return {
      id: `msg_fake_${ctx.seq}`,
      type: "message",
      role: "assistant",
      model: ctx.model,
      content,
      stop_reason: stopReason(reply),
      stop_sequence: null,
      usage: { ...inputUsage(ctx), output_tokens: ctx.usage.output },
    };
  },

  errorBody(status, message) {
    const type = ERROR_TYPES[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
    return { type: "error", error: { type, message } };
  },
};
