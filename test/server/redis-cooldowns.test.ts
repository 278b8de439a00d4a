/**
 * Provider cooldowns in Redis: a provider one instance saw failing is skipped by the model chains of
 * another instance (two connections, as two servers would have), on the real Redis on loopback.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/agent/events.js";
import { runAgent } from "../../src/agent/run-agent.js";
import { openRedisCooldowns, type RedisCooldowns } from "../../src/server/storage/redis-cooldowns.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { defaultToolsConfig } from "../../src/tools/builtin/defaults.js";
import { memoryTodoStore } from "../../src/tools/memory-todo-store.js";
import { fakeModel } from "../support/fake-models.js";
import { REDIS_URL, redisAvailable } from "../support/redis.js";

describe.runIf(redisAvailable)("model cooldowns in Redis", () => {
  let instanceA: RedisCooldowns;
  let instanceB: RedisCooldowns;
  let primary: FakeLlmServer;
  let secondary: FakeLlmServer;

  beforeAll(async () => {
    instanceA = await openRedisCooldowns(REDIS_URL);
    instanceB = await openRedisCooldowns(REDIS_URL);
    primary = await startFakeLlmServer({ strict: true });
    secondary = await startFakeLlmServer({ strict: true });
  });
  afterAll(async () => {
    await Promise.all([instanceA.close(), instanceB.close(), primary.close(), secondary.close()]);
  });

  const unique = () => `test-${process.pid}-${randomBytes(4).toString("hex")}`;

  async function run(cooldowns: RedisCooldowns, primaryProvider: string): Promise<AgentEvent[]> {
    const events: AgentEvent[] = [];
    for await (const event of runAgent({
      model: {
        ...fakeModel(primary, "openai", { provider: primaryProvider }),
        fallbacks: [fakeModel(secondary, "gemini", { provider: unique() })],
      },
      messages: [{ role: "user", content: "hi" }],
      toolEnvironment: { workspace: process.cwd(), todos: memoryTodoStore(), config: defaultToolsConfig() },
      streamOptions: { retry: { maxRetries: 0 } },
      fallback: { cooldowns, cooldownMs: 60_000 },
    })) {
      events.push(event);
    }
    return events;
  }

  it("a 429 seen by instance A sends instance B's next call straight to the secondary", async () => {
    const provider = unique();
    primary.enqueue({ error: { status: 429 } });
    secondary.enqueue({ text: "from A's fallback" }, { text: "from B's fallback" });
    const onA = await run(instanceA, provider);
    expect(onA.find((e) => e.type === "model_fallback")).toMatchObject({ code: "rate_limit" });
    expect(primary.requests).toHaveLength(1);

    const onB = await run(instanceB, provider);
    expect(primary.requests).toHaveLength(1); // B never asked the primary
    expect(secondary.requests).toHaveLength(2);
    expect(onB.find((e) => e.type === "model_fallback")).toMatchObject({ skipped: true });
    expect(onB.find((e) => e.type === "done")).toMatchObject({ answer: "from B's fallback" });
    await instanceA.clear(provider);
  });

  it("never shortens a longer cooldown, and a cleared or expired one is gone for everyone", async () => {
    const provider = unique();
    const now = Date.now();
    await instanceA.set(provider, { until: now + 600_000, reason: "key rejected", code: "auth" });
    await instanceB.set(provider, { until: now + 1_000, reason: "rate limited", code: "rate_limit" });
    expect((await instanceB.get(provider))?.code).toBe("auth");
    await instanceB.clear(provider);
    expect(await instanceA.get(provider)).toBeUndefined();
    await instanceA.set(provider, { until: Date.now() + 50, reason: "rate limited", code: "rate_limit" });
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(await instanceB.get(provider)).toBeUndefined();
  });
});
