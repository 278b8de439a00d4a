import { describe, expect, it } from "vitest";
import type { SseEvent } from "../../src/llm/adapter.js";
import {
  DEFAULT_RETRY_POLICY,
  parseRetryAfter,
  resolveRetryPolicy,
  retryDelayMs,
} from "../../src/llm/retry.js";
import { createSseDecoder } from "../../src/llm/sse.js";
import { abortableSleep } from "../../src/shared/abortable-sleep.js";

describe("retry policy", () => {
  it("defaults to 4 retries, 500 ms base, 30 s cap, and overrides field by field", () => {
    expect(resolveRetryPolicy(undefined)).toEqual({ maxRetries: 4, baseDelayMs: 500, maxDelayMs: 30_000 });
    expect(resolveRetryPolicy({ maxRetries: 1 })).toEqual({
      maxRetries: 1,
      baseDelayMs: 500,
      maxDelayMs: 30_000,
    });
    expect(resolveRetryPolicy({ maxRetries: -3, baseDelayMs: -1 })).toMatchObject({
      maxRetries: 0,
      baseDelayMs: 0,
    });
  });

  it("backs off exponentially with full jitter, capped at maxDelayMs", () => {
    const half = () => 0.5;
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n, DEFAULT_RETRY_POLICY, half))).toEqual([
      250, 500, 1000, 2000,
    ]);
    expect(retryDelayMs(1, DEFAULT_RETRY_POLICY, () => 0)).toBe(0);
    expect(retryDelayMs(20, DEFAULT_RETRY_POLICY, () => 0.999_999)).toBe(29_999);
  });

  it("prefers the server's delay but never beyond maxDelayMs", () => {
    expect(retryDelayMs(1, DEFAULT_RETRY_POLICY, () => 0.5, 2000)).toBe(2000);
    expect(retryDelayMs(1, DEFAULT_RETRY_POLICY, () => 0.5, 120_000)).toBe(30_000);
  });
});

describe("parseRetryAfter", () => {
  it("reads seconds, HTTP dates and retry-after-ms", () => {
    expect(parseRetryAfter({ "retry-after": "3" })).toBe(3000);
    expect(parseRetryAfter({ "retry-after": "0.5" })).toBe(500);
    const now = Date.parse("2025-01-01T00:00:00Z");
    expect(parseRetryAfter({ "retry-after": "Wed, 01 Jan 2025 00:00:07 GMT" }, now)).toBe(7000);
    expect(parseRetryAfter({ "retry-after": "Tue, 31 Dec 2024 23:59:00 GMT" }, now)).toBe(0);
    expect(parseRetryAfter({ "retry-after-ms": "120", "retry-after": "9" })).toBe(120);
  });

  it("ignores absent or unreadable values", () => {
    expect(parseRetryAfter({})).toBeUndefined();
    expect(parseRetryAfter({ "retry-after": "soon" })).toBeUndefined();
    expect(parseRetryAfter({ "retry-after": "-4" })).toBeUndefined();
  });
});

describe("abortableSleep", () => {
  it("resolves at once when the signal aborts", async () => {
    const controller = new AbortController();
    const sleeping = abortableSleep(600_000, controller.signal);
    controller.abort();
    await expect(sleeping).resolves.toBeUndefined();
  });
});

describe("createSseDecoder", () => {
  const collect = (chunks: Uint8Array[]): SseEvent[] => {
    const events: SseEvent[] = [];
    const decoder = createSseDecoder((e) => events.push(e));
    for (const chunk of chunks) decoder.feed(chunk);
    decoder.end();
    return events;
  };

  it("keeps multi-byte characters whole when bytes are split inside them", () => {
    const bytes = Buffer.from("data: héllo 🍜 “q”\n\n", "utf8");
    // One byte at a time splits every multi-byte character.
    const events = collect([...bytes].map((b) => Uint8Array.of(b)));
    expect(events.map((e) => e.data)).toEqual(["héllo 🍜 “q”"]);
  });

  it("accepts CRLF separators, event names and a last event without its blank line", () => {
    const body = 'event: message_start\r\ndata: {"a":1}\r\n\r\ndata: two\r\n\r\ndata: tail';
    const events = collect([Buffer.from(body)]);
    expect(events).toMatchObject([
      { event: "message_start", data: '{"a":1}' },
      { data: "two" },
      { data: "tail" },
    ]);
  });
});
