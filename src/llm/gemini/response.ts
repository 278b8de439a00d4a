/** Converts a non-streaming `generateContent` response body into ModelEvents. */
import type { ModelEvent } from "../types.js";
import { GeminiStreamParser } from "./parser.js";

/**
 * Converts a complete `GenerateContentResponse` (parsed JSON or its text) into ModelEvents ending with
 * `done` or `error`. A full response has the same shape as one stream chunk, so the stream parser reads it.
 */
export function parseGenerateContentResponse(body: unknown): ModelEvent[] {
  const parser = new GeminiStreamParser();
  const data = typeof body === "string" ? body : JSON.stringify(body ?? null);
  return [...parser.push({ data }), ...parser.finish()];
}
