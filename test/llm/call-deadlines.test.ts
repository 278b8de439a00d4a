/**
 * Model-call deadlines over real HTTP on 127.0.0.1, through every protocol: a stream that pings
 * forever, a provider that never answers, one that trickles real data forever, and retries that run
 * out of budget. Small configured limits; the assertions are about which error ended the call.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_MODEL_CALL_LIMITS, startCallDeadlines } from "../../src/llm/call-limits.js";
import { stream } from "../../src/llm/providers.js";
import { DEFAULT_RETRY_POLICY } from "../../src/llm/retry.js";
import type { ModelEvent, ModelSpec, StreamOptions, WireProtocol } from "../../src/llm/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";

let server: FakeLlmServer;

beforeAll(async () => {
  // One piece per text, so the first text event is a known frame.
  server = await startFakeLlmServer({ strict: true, chunkSize: 1000 });
});
afterAll(() => server.close());
beforeEach(() => server.reset());

function modelFor(protocol: WireProtocol): ModelSpec {
  return {
    provider: `fake-${protocol}`,
    id: "fake-model",
    protocol,
    baseUrl: protocol === "openai" ? `${server.url}/v1` : server.url,
    apiKey: "test-key",
    contextWindow: 8000,
  };
}

async function call(model: ModelSpec, options: StreamOptions = {}): Promise<ModelEvent[]> {
  const events: ModelEvent[] = [];
  const context = { messages: [{ role: "user" as const, content: "hi" }] };
  for await (const event of stream(model, context, options)) events.push(event);
  return events;
}

function finalError(events: ModelEvent[]) {
  const last = events.at(-1);
  if (last?.type !== "error") throw new Error(`expected a final error, got ${JSON.stringify(last)}`);
  return last.error;
}

const texts = (events: ModelEvent[]) => events.flatMap((e) => (e.type === "text_delta" ? [e.text] : []));

/** SSE events up to and including the first text delta, per protocol's fake encoder. */
const FIRST_TEXT_FRAMES: Record<WireProtocol, number> = { openai: 2, anthropic: 4, gemini: 1 };

describe.each(["openai", "anthropic", "gemini"] as const)("%s deadlines", (protocol) => {
  it("ends a stream that sends text and then only `: ping` comments on the idle limit", async () => {
    server.enqueue({
      text: "partial answer",
      stall: { afterChunks: FIRST_TEXT_FRAMES[protocol], mode: "ping", everyMs: 20 },
    });
    const events = await call(modelFor(protocol), { limits: { idleMs: 200 } });
    expect(texts(events)).toEqual(["partial answer"]);
    const error = finalError(events);
    expect(error.code).toBe("timeout");
    expect(error.message).toContain("idle limit");
    expect(error.hint).toContain("modelCalls.idleMs");
    // Output was delivered, so the call is not repeated.
    expect(server.requests).toHaveLength(1);
  });

  it("ends a provider that never answers on the first-byte limit", async () => {
    server.enqueue({ text: "never sent", delayMs: 3_600_000 });
    const events = await call(modelFor(protocol), { limits: { firstByteMs: 200 }, retry: { maxRetries: 0 } });
    const error = finalError(events);
    expect(error.code).toBe("timeout");
    expect(error.message).toContain("first-byte limit");
    expect(error.hint).toContain("modelCalls.firstByteMs");
  });

  it("ends a stream that trickles real data past the overall call deadline", async () => {
    server.enqueue({
      text: "again",
      stall: { afterChunks: FIRST_TEXT_FRAMES[protocol], mode: "trickle", everyMs: 20 },
    });
    const events = await call(modelFor(protocol), { limits: { idleMs: 200, callMs: 500 } });
    expect(texts(events).length).toBeGreaterThan(1);
    const error = finalError(events);
    expect(error.code).toBe("timeout");
    expect(error.message).toContain("overall call deadline");
    expect(error.hint).toContain("modelCalls.callMs");
  });
});

describe("retry budget", () => {
  it("stops retrying a silent provider when the budget is spent, naming the budget", async () => {
    const silent = { text: "never sent", delayMs: 3_600_000 };
    server.enqueue(silent, silent, silent, silent, silent, silent);
    const events = await call(modelFor("openai"), {
      limits: { firstByteMs: 200, retryBudgetMs: 500 },
      retry: { maxRetries: 10, baseDelayMs: 1, maxDelayMs: 1 },
    });
    expect(events.some((e) => e.type === "retry")).toBe(true);
    const error = finalError(events);
    expect(error.code).toBe("timeout");
    expect(error.message).toContain("retry budget");
    expect(error.hint).toContain("modelCalls.retryBudgetMs");
  });

  it("does not start a retry whose backoff would end past the budget", async () => {
    const busy = { error: { status: 503, headers: { "retry-after-ms": "300" } } };
    server.enqueue(busy, busy, busy, busy);
    const events = await call(modelFor("anthropic"), {
      limits: { retryBudgetMs: 500 },
      retry: { maxRetries: 10 },
    });
    const error = finalError(events);
    expect(error.code).toBe("provider_unavailable");
    expect(error.message).toContain("503");
    expect(error.message).toContain("retry budget");
    expect(error.hint).toContain("modelCalls.retryBudgetMs");
  });
});

describe("default limits", () => {
  it("give up on a provider that never answers within 150 s", () => {
    vi.useFakeTimers({ now: 0 });
    try {
      const limits = DEFAULT_MODEL_CALL_LIMITS;
      const deadlines = startCallDeadlines(limits);
      const worstBackoffMs = 30_000;
      let ended: string | undefined;
      for (let attempt = 1; ended === undefined; attempt++) {
        let hit: string | undefined;
        const timers = deadlines.startAttempt((h) => {
          hit = h.name;
        });
        // The provider never answers: the next timer to fire is this attempt's deadline.
        vi.advanceTimersToNextTimer();
        timers.stop();
        if (hit === "retryBudgetMs" || hit === "callMs") ended = hit;
        else if (attempt > DEFAULT_RETRY_POLICY.maxRetries) ended = "retries used up";
        else if (deadlines.retryBlockedBy(worstBackoffMs)) ended = "retry blocked";
        else vi.advanceTimersByTime(worstBackoffMs);
      }
      expect(deadlines.elapsedMs()).toBeLessThanOrEqual(150_000);
    } finally {
      vi.useRealTimers();
    }
  });
});
