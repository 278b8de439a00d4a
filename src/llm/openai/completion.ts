/** Translates a non-streaming Chat Completions response body into the same ModelEvents a stream gives. */
import { DimsumError } from "../../errors.js";
import type { ModelEvent } from "../types.js";
import { streamError } from "./error-message.js";
import { asRecord } from "./json.js";
import { ChatCompletionsParser } from "./stream-parser.js";

/** Events for a whole `chat.completion` body (parsed JSON or its text), ending with `done` or `error`. */
export function parseChatCompletion(body: unknown, provider = "openai"): ModelEvent[] {
  let value = body;
  if (typeof body === "string") {
    try {
      value = JSON.parse(body);
    } catch {
      return [badBody(provider, body.slice(0, 200))];
    }
  }
  const record = asRecord(value);
  if (!record) return [badBody(provider, typeof value)];
  if (record.error !== undefined && record.error !== null) {
    return [{ type: "error", error: streamError(record, provider) }];
  }
  const parser = new ChatCompletionsParser(provider);
  // `choices[].message` has the shape of one big delta, so the stream parser folds it unchanged.
  const events = parser.pushChunk(record);
  // The body is complete by definition; without this, a missing finish_reason would read as a cut stream.
  parser.push({ data: "[DONE]" });
  return [...events, ...parser.finish()];
}

function badBody(provider: string, got: string): ModelEvent {
  return {
    type: "error",
    error: new DimsumError(
      "provider_unavailable",
      `${provider} returned a body that is not a chat completion: ${got}`,
      {
        hint: "check that the base URL points at an OpenAI-compatible /v1 endpoint",
      },
    ),
  };
}
