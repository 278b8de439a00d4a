/** OpenAI Chat Completions shapes for the fake server, modelled on the recorded streams. */
import type { FinishReason } from "../llm/types.js";
import { argsText, hasToolCalls, sseFrame } from "./fake-llm-encoders.js";
import type { FakeReply, ProtocolEncoder, RecordedRequest, ReplyContext } from "./fake-llm-types.js";

function finishReason(reply: FakeReply): string {
  const reason: FinishReason = reply.finishReason ?? (hasToolCalls(reply) ? "tool_calls" : "stop");
  if (reason === "length" || reason === "tool_calls" || reason === "content_filter") return reason;
  return "stop";
}

function callId(ctx: ReplyContext, index: number, given: string | undefined): string {
  return given ?? `call_fake_${ctx.seq}_${index}`;
}

function usageBody(ctx: ReplyContext) {
  const { input, output, cached } = ctx.usage;
  const body: Record<string, unknown> = {
    prompt_tokens: input,
    completion_tokens: output,
    total_tokens: input + output,
  };
  if (cached !== undefined) body.prompt_tokens_details = { cached_tokens: cached };
  return body;
}

function wantsUsage(request: RecordedRequest): boolean {
  const body = request.body as { stream_options?: { include_usage?: unknown } } | undefined;
  return body?.stream_options?.include_usage === true;
}

export const openaiEncoder: ProtocolEncoder = {
  stream(ctx, request) {
    const { reply, split } = ctx;
    const head = {
      id: `chatcmpl-fake-${ctx.seq}`,
      object: "chat.completion.chunk",
      created: Math.floor(Date.now() / 1000),
      model: ctx.model,
      system_fingerprint: "fp_fake",
    };
    const frames: string[] = [];
    const chunk = (delta: object, finish: string | null = null) =>
      frames.push(
        sseFrame({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] }),
      );
    const reasoning = reply.reasoning ?? "";
    // DeepSeek opens reasoning streams with an empty reasoning_content and a null content.
    if (reasoning !== "") chunk({ role: "assistant", content: null, reasoning_content: "" });
    else chunk({ role: "assistant", content: "", refusal: null });
    for (const piece of split(reasoning)) chunk({ content: null, reasoning_content: piece });
    for (const piece of split(reply.text ?? "")) {
      chunk(reasoning !== "" ? { content: piece, reasoning_content: null } : { content: piece });
    }
    (reply.toolCalls ?? []).forEach((call, index) => {
      chunk({
        tool_calls: [
          {
            index,
            id: callId(ctx, index, call.id),
            type: "function",
            function: { name: call.name, arguments: "" },
          },
        ],
      });
      for (const piece of split(argsText(call)))
        chunk({ tool_calls: [{ index, function: { arguments: piece } }] });
    });
    chunk({}, finishReason(reply));
    if (wantsUsage(request)) frames.push(sseFrame({ ...head, choices: [], usage: usageBody(ctx) }));
    frames.push(sseFrame("[DONE]"));
    return frames;
  },

  json(ctx) {
    const { reply } = ctx;
    const message: Record<string, unknown> = {
      role: "assistant",
      content: reply.text ?? (hasToolCalls(reply) ? null : ""),
      refusal: null,
    };
    if (reply.reasoning) message.reasoning_content = reply.reasoning;
    if (hasToolCalls(reply)) {
      message.tool_calls = (reply.toolCalls ?? []).map((call, index) => ({
        id: callId(ctx, index, call.id),
        type: "function",
        function: { name: call.name, arguments: argsText(call) },
      }));
    }
    return {
      id: `chatcmpl-fake-${ctx.seq}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: ctx.model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(reply) }],
      usage: usageBody(ctx),
      system_fingerprint: "fp_fake",
    };
  },

  errorBody(status, message) {
    const type =
      status === 429 ? "rate_limit_exceeded" : status >= 500 ? "server_error" : "invalid_request_error";
    const code = status === 401 ? "invalid_api_key" : status === 404 ? "model_not_found" : null;
    return { error: { message, type, param: null, code } };
  },
};
