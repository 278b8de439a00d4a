/** Gemini `streamGenerateContent?alt=sse` shapes for the fake server, modelled on the recorded streams. */
import type { FinishReason } from "../llm/types.js";
import { argsObject, fakeSignature, hasToolCalls, sseFrame } from "./fake-llm-encoders.js";
import type { FakeReply, ProtocolEncoder, ReplyContext } from "./fake-llm-types.js";

const FINISH_REASONS: Record<FinishReason, string> = {
  stop: "STOP",
  length: "MAX_TOKENS",
  // Gemini has no tool-call finish reason: calls end with STOP.
  tool_calls: "STOP",
  content_filter: "SAFETY",
  refusal: "SAFETY",
  error: "OTHER",
  other: "OTHER",
};

const ERROR_STATUS: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

type Part = Record<string, unknown>;

function finishReason(reply: FakeReply): string {
  return FINISH_REASONS[reply.finishReason ?? (hasToolCalls(reply) ? "tool_calls" : "stop")];
}

/** Function-call parts; like Gemini 3, the first carries a thought signature. */
function callParts(ctx: ReplyContext): Part[] {
  return (ctx.reply.toolCalls ?? []).map((call, i) => {
    const functionCall: Part = { name: call.name, args: argsObject(call) };
    if (call.id !== undefined) functionCall.id = call.id;
    return i === 0
      ? { functionCall, thoughtSignature: fakeSignature("thought", ctx.seq, i) }
      : { functionCall };
  });
}

function usageMetadata(ctx: ReplyContext, candidates: number) {
  return {
    promptTokenCount: ctx.usage.input,
    candidatesTokenCount: candidates,
    totalTokenCount: ctx.usage.input + candidates,
    ...(ctx.usage.cached ? { cachedContentTokenCount: ctx.usage.cached } : {}),
  };
}

export const geminiEncoder: ProtocolEncoder = {
  stream(ctx) {
    const { reply, split } = ctx;
    const chunks: Part[][] = [];
    for (const text of split(reply.reasoning ?? "")) chunks.push([{ text, thought: true }]);
    for (const text of split(reply.text ?? "")) chunks.push([{ text }]);
    const calls = callParts(ctx);
    if (calls.length > 0) chunks.push(calls);
    // As recorded: the last chunk is an empty text part with the finish reason (signed when no call was).
    chunks.push([
      calls.length > 0 ? { text: "" } : { text: "", thoughtSignature: fakeSignature("thought", ctx.seq, 0) },
    ]);
    const last = chunks.length - 1;
    const responseId = `fake-resp-${ctx.seq}`;
    return chunks.map((parts, i) => {
      const candidate: Part = { content: { parts, role: "model" }, index: 0 };
      if (i === last) candidate.finishReason = finishReason(reply);
      // usageMetadata is cumulative and repeated on every chunk; only the last one is final.
      const candidates = Math.round((ctx.usage.output * (i + 1)) / chunks.length);
      const payload = {
        candidates: [candidate],
        usageMetadata: usageMetadata(ctx, candidates),
        modelVersion: ctx.model,
        responseId,
      };
      // The live API separates events with CRLF; parsers must accept it.
      return sseFrame(payload, undefined, "\r\n");
    });
  },

  json(ctx) {
    const { reply } = ctx;
    const parts: Part[] = [];
    if (reply.reasoning) parts.push({ text: reply.reasoning, thought: true });
    if (reply.text) parts.push({ text: reply.text });
    parts.push(...callParts(ctx));
    return {
      candidates: [{ content: { parts, role: "model" }, finishReason: finishReason(reply), index: 0 }],
      usageMetadata: usageMetadata(ctx, ctx.usage.output),
      modelVersion: ctx.model,
      responseId: `fake-resp-${ctx.seq}`,
    };
  },

  errorBody(status, message) {
    return {
      error: {
        code: status,
        message,
        status: ERROR_STATUS[status] ?? (status >= 500 ? "INTERNAL" : "FAILED_PRECONDITION"),
      },
    };
  },
};
