/**
 * Tool calls a model wrote as text, because the server that runs it has no tool parser (Ollama,
 * llama.cpp, vLLM without `--tool-call-parser`): Hermes/Qwen `<tool_call>{json}</tool_call>`,
 * Qwen3-Coder `<tool_call><function=name><parameter=p>…`, Mistral `[TOOL_CALLS]…`, Llama 3.x bare
 * JSON. Markup only counts at the start of a line, outside code, when it is all that follows and
 * parses; the text before it streams on, a possible markup start is held until it is decided.
 */
import { randomUUID } from "node:crypto";
import { parseMarkup } from "./text-tool-markup.js";
import type { ModelEvent, StreamFunction, ToolCall, ToolCallFormat, ToolSchema } from "./types.js";

const MARKERS: Record<Exclude<ToolCallFormat, "none">, readonly string[]> = {
  hermes: ["<tool_call>"],
  "qwen3-coder": ["<tool_call>"],
  mistral: ["[TOOL_CALLS]"],
  "llama-json": ["<|python_tag|>", "{"],
  auto: ["<tool_call>", "[TOOL_CALLS]", "<|python_tag|>", "{"],
};

/** What the scan found once the stream ended: text still to show, and the calls. */
export interface ScanResult {
  text: string;
  calls: ToolCall[];
}

/** Splits streamed text into what may be shown now and markup held back until the end. */
export class TextToolCallScanner {
  readonly #format: Exclude<ToolCallFormat, "none">;
  readonly #tools: readonly ToolSchema[];
  #held = "";
  #capturing = false;
  #lineStart = true;
  #line = "";
  #inFence = false;
  /** Nothing but whitespace shown yet: Llama's bare JSON counts only as a whole message. */
  #blank = true;

  constructor(format: Exclude<ToolCallFormat, "none">, tools: readonly ToolSchema[]) {
    this.#format = format;
    this.#tools = tools;
  }

  /** Takes a text delta; returns the part that can be shown now. */
  push(delta: string): string {
    if (this.#capturing) {
      this.#held += delta;
      return "";
    }
    const buf = this.#held + delta;
    this.#held = "";
    for (let i = 0; i < buf.length; i++) {
      const ch = buf[i] as string;
      if (this.#lineStart && !this.#inFence && (ch === "<" || ch === "[" || ch === "{")) {
        const rest = buf.slice(i);
        const found = this.#markerAt(rest);
        if (found === "full") {
          this.#capturing = true;
          this.#held = rest;
          return buf.slice(0, i);
        }
        if (found === "prefix") {
          this.#held = rest;
          return buf.slice(0, i);
        }
      }
      this.#advance(ch);
    }
    return buf;
  }

  /** Ends the stream: calls when the held text is exact markup, else the held text to show. */
  finish(): ScanResult {
    const held = this.#held;
    this.#held = "";
    if (!this.#capturing) return { text: held, calls: [] };
    const parsed = parseMarkup(held, this.#format, this.#tools);
    if (parsed === undefined) return { text: held, calls: [] };
    return {
      text: "",
      calls: parsed.map((call) => ({
        id: `call_${randomUUID().replace(/-/g, "").slice(0, 24)}`,
        name: call.name,
        arguments: JSON.stringify(call.arguments),
      })),
    };
  }

  #markerAt(rest: string): "full" | "prefix" | undefined {
    for (const marker of MARKERS[this.#format]) {
      if (marker === "{" && !this.#blank) continue;
      if (rest.startsWith(marker)) return "full";
      if (marker.startsWith(rest)) return "prefix";
    }
    return undefined;
  }

  #advance(ch: string): void {
    if (ch === "\n") {
      // A line opening or closing a fence: ``` or ~~~ at its start.
      if (/^\s*(```|~~~)/.test(this.#line)) this.#inFence = !this.#inFence;
      this.#line = "";
      this.#lineStart = true;
      return;
    }
    this.#line += ch;
    if (ch.trim() !== "") {
      this.#lineStart = false;
      this.#blank = false;
    }
  }
}

/**
 * Wraps a stream function so a model with a `toolCallFormat` (other than `none`) that was offered
 * tools has its text markup turned into `tool_call` events and parts of the final message.
 */
export function withTextToolCalls(inner: StreamFunction): StreamFunction {
  return (model, context, options) => {
    const format = model.toolCallFormat;
    const tools = context.tools ?? [];
    if (format === undefined || format === "none" || tools.length === 0 || options?.toolChoice === "none") {
      return inner(model, context, options);
    }
    return scanStream(inner(model, context, options), new TextToolCallScanner(format, tools));
  };
}

async function* scanStream(
  events: AsyncIterable<ModelEvent>,
  scanner: TextToolCallScanner,
): AsyncGenerator<ModelEvent> {
  let shown = "";
  for await (const event of events) {
    if (event.type === "text_delta") {
      const text = scanner.push(event.text);
      shown += text;
      if (text !== "") yield { type: "text_delta", text };
      continue;
    }
    if (event.type === "done" || event.type === "error") {
      const end = scanner.finish();
      shown += end.text;
      if (end.text !== "") yield { type: "text_delta", text: end.text };
      const native = event.type === "done" && event.message.content.some((p) => p.type === "tool_call");
      if (event.type === "error" || end.calls.length === 0 || native) {
        yield event;
        return;
      }
      for (const call of end.calls) yield { type: "tool_call", call };
      const kept = event.message.content.filter((p) => p.type !== "text");
      const text = shown.trimEnd();
      yield {
        ...event,
        finishReason: "tool_calls",
        message: {
          role: "assistant",
          content: [
            ...kept,
            ...(text === "" ? [] : [{ type: "text" as const, text }]),
            ...end.calls.map((call) => ({ type: "tool_call" as const, ...call })),
          ],
        },
      };
      return;
    }
    yield event;
  }
}
