/** Helpers shared by the fake server's protocol encoders: splitting, ids, usage, signatures. */
import type { FakeReply, FakeToolCall } from "./fake-llm-types.js";

// Uneven piece sizes catch parsers that only work when deltas line up with tokens or JSON tokens.
const DEFAULT_PIECE_SIZES = [3, 5, 8, 4, 7, 6];

/** Returns a splitter cutting text into pieces of `size` chars (or cycling 3–8), never inside a surrogate pair. */
export function makeSplitter(size?: number): (text: string) => string[] {
  const sizes = size !== undefined && size > 0 ? [Math.floor(size)] : DEFAULT_PIECE_SIZES;
  return (text) => {
    const pieces: string[] = [];
    let at = 0;
    let turn = 0;
    while (at < text.length) {
      let end = Math.min(text.length, at + (sizes[turn++ % sizes.length] ?? 4));
      const code = text.charCodeAt(end - 1);
      if (end < text.length && code >= 0xd800 && code <= 0xdbff) end++;
      pieces.push(text.slice(at, end));
      at = end;
    }
    return pieces;
  };
}

/** The argument text exactly as the fake model "produced" it. */
export function argsText(call: FakeToolCall): string {
  return typeof call.args === "string" ? call.args : JSON.stringify(call.args);
}

/** Arguments as an object for protocols that carry objects; unparseable strings are passed through raw. */
export function argsObject(call: FakeToolCall): unknown {
  if (typeof call.args !== "string") return call.args;
  try {
    return JSON.parse(call.args) as unknown;
  } catch {
    return call.args;
  }
}

/** Rough token counts (4 chars a token) so usage is plausible without being scripted. */
export function estimateUsage(reply: FakeReply, requestBytes: number): { input: number; output: number } {
  if (reply.usage) return reply.usage;
  let chars = (reply.text ?? "").length + (reply.reasoning ?? "").length;
  for (const call of reply.toolCalls ?? []) chars += call.name.length + argsText(call).length;
  return { input: Math.max(1, Math.ceil(requestBytes / 4)), output: Math.max(1, Math.ceil(chars / 4)) };
}

/** A stable, obviously fake signature; adapters must send it back unchanged. */
export function fakeSignature(kind: string, seq: number, index: number): string {
  return Buffer.from(`fake-${kind}-signature:${seq}:${index}`).toString("base64");
}

export function hasToolCalls(reply: FakeReply): boolean {
  return (reply.toolCalls?.length ?? 0) > 0;
}

/** Default error message for a status, as a provider might phrase it. */
export function defaultErrorMessage(status: number): string {
  if (status === 401) return "Invalid API key (fake LLM server)";
  if (status === 403) return "Permission denied (fake LLM server)";
  if (status === 404) return "Model not found (fake LLM server)";
  if (status === 429) return "Rate limit exceeded (fake LLM server)";
  if (status >= 500) return `Internal error ${status} (fake LLM server)`;
  return `Bad request ${status} (fake LLM server)`;
}

/** `data: <json>\n\n`, optionally with an `event:` line. */
export function sseFrame(payload: unknown, event?: string, eol = "\n"): string {
  const data = typeof payload === "string" ? payload : JSON.stringify(payload);
  return event === undefined ? `data: ${data}${eol}${eol}` : `event: ${event}${eol}data: ${data}${eol}${eol}`;
}
