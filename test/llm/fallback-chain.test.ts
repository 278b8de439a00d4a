/**
 * Model chains end to end: two fake providers on loopback, a real SQLite session store, the session
 * runner. The primary fails (429, 503, a stalled stream, a rejected key); the secondary answers; the
 * events and the trace name both; a run inside the cooldown goes straight to the secondary.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/agent/events.js";
import { runSessionTurn } from "../../src/agent/session-runner.js";
import { type CooldownStore, createMemoryCooldownStore } from "../../src/llm/cooldowns.js";
import type { FallbackSettings } from "../../src/llm/fallback-chain.js";
import type { ModelSpec, StreamOptions } from "../../src/llm/types.js";
import { openDatabase } from "../../src/store/database.js";
import { SqliteSessionStore } from "../../src/store/sqlite-session-store.js";
import type { SessionRef } from "../../src/store/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { defaultToolsConfig } from "../../src/tools/builtin/defaults.js";
import { fakeModel } from "../support/fake-models.js";

let primary: FakeLlmServer;
let secondary: FakeLlmServer;
let store: SqliteSessionStore;
let close: () => void;
let cooldowns: CooldownStore;
let fallback: FallbackSettings;

beforeAll(async () => {
  primary = await startFakeLlmServer({ strict: true });
  secondary = await startFakeLlmServer({ strict: true });
});
afterAll(async () => {
  await Promise.all([primary.close(), secondary.close()]);
});
beforeEach(() => {
  primary.reset();
  secondary.reset();
  const db = openDatabase(join(mkdtempSync(join(tmpdir(), "dimsum-fallback-")), "dimsum.db"));
  store = new SqliteSessionStore(db);
  close = () => db.close();
  cooldowns = createMemoryCooldownStore();
  fallback = { cooldowns, cooldownMs: 60_000, authCooldownMs: 1_800_000 };
});
afterEach(() => close());

function chain(): ModelSpec {
  return {
    ...fakeModel(primary, "openai"),
    fallbacks: [fakeModel(secondary, "anthropic", { pricing: { input: 3, output: 15 } })],
  };
}

const quickRetries: Omit<StreamOptions, "signal" | "toolChoice"> = {
  retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 5 },
};

async function run(
  ref: SessionRef,
  input: string,
  streamOptions = quickRetries,
): Promise<{ events: AgentEvent[]; runId: string }> {
  const events: AgentEvent[] = [];
  let runId = "";
  for await (const event of runSessionTurn({
    store,
    ref,
    model: chain(),
    input,
    toolEnvironment: { workspace: process.cwd(), config: defaultToolsConfig() },
    streamOptions,
    fallback,
  })) {
    if (event.type === "run_start") runId = event.runId;
    events.push(event);
  }
  return { events, runId };
}

function only<T extends AgentEvent["type"]>(
  events: AgentEvent[],
  type: T,
): Extract<AgentEvent, { type: T }>[] {
  return events.filter((e): e is Extract<AgentEvent, { type: T }> => e.type === type);
}

const ref: SessionRef = { userId: "ana", sessionId: "s1" };

describe("model chains", () => {
  it("moves to the secondary after the primary's 429 retries are spent; the trace names both; the cooldown skips the primary", async () => {
    primary.enqueue({ error: { status: 429 } }, { error: { status: 429 } });
    secondary.enqueue({ text: "answered by the secondary", usage: { input: 10, output: 4 } });

    const first = await run(ref, "hello");
    expect(primary.requests).toHaveLength(2); // the first try and its one retry
    expect(secondary.requests).toHaveLength(1);
    expect(only(first.events, "retry")).toHaveLength(1);
    const [move] = only(first.events, "model_fallback");
    expect(move).toMatchObject({
      from: "openai:gpt-test",
      to: "anthropic:claude-test",
      code: "rate_limit",
    });
    expect(move?.skipped).toBeUndefined();
    expect(move?.reason).toContain("429");
    const [done] = only(first.events, "done");
    expect(done?.answer).toBe("answered by the secondary");
    expect(done?.model).toBe("anthropic:claude-test");
    // The secondary's prices, not the primary's (which has none).
    expect(done?.costUsd).toBeCloseTo((10 * 3 + 4 * 15) / 1_000_000, 12);

    const trace = await store.getRunEvents(ref, first.runId);
    const fallbackRecord = trace.find((e) => e.type === "model_fallback")?.payload;
    expect(fallbackRecord).toMatchObject({ from: "openai:gpt-test", to: "anthropic:claude-test" });
    const call = trace.find((e) => e.type === "model_call")?.payload;
    expect(call).toMatchObject({ model: "anthropic:claude-test" });

    const cooling = await cooldowns.get("openai");
    expect(cooling?.code).toBe("rate_limit");

    // Inside the cooldown: no request reaches the primary at all.
    primary.reset();
    secondary.reset();
    secondary.enqueue({ text: "second answer" });
    const second = await run(ref, "again");
    expect(primary.requests).toHaveLength(0);
    expect(secondary.requests).toHaveLength(1);
    const [skip] = only(second.events, "model_fallback");
    expect(skip).toMatchObject({ from: "openai:gpt-test", to: "anthropic:claude-test", skipped: true });
    expect(skip?.reason).toContain("cooling down");
    expect(only(second.events, "done")[0]?.answer).toBe("second answer");
  });

  it("moves on a 503 once retries are spent", async () => {
    primary.enqueue({ error: { status: 503 } }, { error: { status: 503 } });
    secondary.enqueue({ text: "fine" });
    const { events } = await run(ref, "hi");
    expect(primary.requests).toHaveLength(2);
    expect(only(events, "model_fallback")[0]).toMatchObject({ code: "provider_unavailable" });
    expect(only(events, "done")[0]?.answer).toBe("fine");
  });

  it("moves when the primary's stream stalls before any output (first-byte limit)", async () => {
    primary.enqueue({ text: "never", stall: { afterChunks: 0, mode: "silent" } });
    secondary.enqueue({ text: "not stalled" });
    const { events } = await run(ref, "hi", {
      retry: { maxRetries: 0 },
      limits: { firstByteMs: 150 },
    });
    expect(primary.requests).toHaveLength(1);
    expect(only(events, "model_fallback")[0]).toMatchObject({ code: "timeout", from: "openai:gpt-test" });
    expect(only(events, "done")[0]?.answer).toBe("not stalled");
  });

  it("moves at once on a rejected key and cools that provider down longer", async () => {
    primary.enqueue({ error: { status: 401 } });
    secondary.enqueue({ text: "keyed" });
    const before = Date.now();
    const { events } = await run(ref, "hi", { retry: { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 5 } });
    expect(primary.requests).toHaveLength(1); // no retries for a key the provider rejected
    expect(only(events, "retry")).toHaveLength(0);
    expect(only(events, "model_fallback")[0]).toMatchObject({ code: "auth" });
    const cooling = await cooldowns.get("openai");
    expect(cooling?.until).toBeGreaterThanOrEqual(before + 1_800_000);
  });

  it("treats an out-of-credit answer as billing: moves at once, long cooldown", async () => {
    primary.enqueue({
      error: {
        status: 429,
        body: { error: { message: "You exceeded your current quota", type: "insufficient_quota" } },
      },
    });
    secondary.enqueue({ text: "paid" });
    const before = Date.now();
    const { events } = await run(ref, "hi", { retry: { maxRetries: 0 } });
    expect(only(events, "model_fallback")[0]?.reason).toContain("billing");
    expect((await cooldowns.get("openai"))?.until).toBeGreaterThanOrEqual(before + 1_800_000);
  });

  it("does not move a call that already streamed output", async () => {
    primary.enqueue({ text: "partial answer that breaks off", dropAfterChunks: 3 });
    const { events } = await run(ref, "hi", { retry: { maxRetries: 0 } });
    expect(secondary.requests).toHaveLength(0);
    expect(only(events, "model_fallback")).toHaveLength(0);
    expect(only(events, "error")[0]?.code).toBe("provider_unavailable");
    expect(only(events, "text_delta").length).toBeGreaterThan(0);
  });

  it("does not move on a request another model would reject too (400)", async () => {
    primary.enqueue({ error: { status: 400 } });
    const { events } = await run(ref, "hi");
    expect(secondary.requests).toHaveLength(0);
    expect(only(events, "error")[0]?.code).toBe("bad_request");
  });

  it("tries the chain in order when every provider is cooling down", async () => {
    await cooldowns.set("openai", { until: Date.now() + 60_000, reason: "rate limited", code: "rate_limit" });
    await cooldowns.set("anthropic", {
      until: Date.now() + 60_000,
      reason: "rate limited",
      code: "rate_limit",
    });
    primary.enqueue({ text: "primary is back" });
    const { events } = await run(ref, "hi");
    expect(primary.requests).toHaveLength(1);
    expect(secondary.requests).toHaveLength(0);
    expect(only(events, "done")[0]?.model).toBe("openai:gpt-test");
    // It answered: its cooldown is over.
    expect(await cooldowns.get("openai")).toBeUndefined();
  });
});
