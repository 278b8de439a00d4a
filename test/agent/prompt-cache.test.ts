import { describe, expect, it } from "vitest";
import type { RecordedRequest } from "../../src/testing/fake-llm-server.js";
import { runPromptCacheScenario } from "../../src/testing/prompt-cache-scenario.js";

type Json = Record<string, unknown>;

/** The request without its cache markers, as `[prefix parts...]` in the order the provider reads them. */
function parts(request: RecordedRequest): { head: string; messages: string[] } {
  const body = request.body as Json;
  const strip = (value: unknown) =>
    JSON.stringify(value, (key, v: unknown) => (key === "cache_control" ? undefined : v));
  return {
    head: strip({ tools: body.tools, system: body.system }),
    messages: ((body.messages as unknown[]) ?? []).map(strip),
  };
}

describe.each(["openai", "anthropic"] as const)("prompt caching over %s", (protocol) => {
  it("keeps every request's prefix stable over a 20-turn chat with tools, memory and skills", async () => {
    const result = await runPromptCacheScenario({ protocol });
    expect(result.requests.length).toBeGreaterThan(30);
    const first = parts(result.requests[0]!);
    for (let i = 1; i < result.requests.length; i++) {
      const previous = parts(result.requests[i - 1]!);
      const current = parts(result.requests[i]!);
      // Tools and system text never change; the history only grows.
      expect(current.head).toBe(first.head);
      expect(current.messages.slice(0, previous.messages.length)).toEqual(previous.messages);
    }
    const last = result.requests.at(-1)?.body as Json;
    const system = JSON.stringify(protocol === "openai" ? (last.messages as unknown[])[0] : last.system);
    const all = JSON.stringify(result.requests.map((r) => r.body));
    // The skill index is in the system text, bodies only where loaded, named or always on.
    expect(system).toContain("trip-planner: Plan a trip day by day");
    expect(system).toContain("# house-style");
    expect(system).not.toContain("# trip-planner");
    expect(all).not.toContain("# code-review");
    expect(all).toContain("# trip-planner");
    // Recalled memories travel in the turn context, not in the system text.
    expect(system).not.toContain("Relevant memories");
    expect(all).toContain("Relevant memories about the user");

    expect(result.cachedShareAfterFirstTurn).toBeGreaterThanOrEqual(0.9);
    expect(result.costWithCache).toBeLessThan(result.costWithoutCache);
  });

  it("marks Anthropic breakpoints on tools, system, the previous call's end and the last message", async () => {
    if (protocol !== "anthropic") return;
    const result = await runPromptCacheScenario({ protocol, turns: 3 });
    for (const request of result.requests) {
      const text = JSON.stringify(request.body);
      const marks = text.split('"cache_control"').length - 1;
      expect(marks).toBeGreaterThanOrEqual(3);
      expect(marks).toBeLessThanOrEqual(4);
    }
    expect(result.calls.some((c) => (c.usage.cacheWriteTokens ?? 0) > 0)).toBe(true);
  });

  it("caches much less with the old order (skills and memories in the system prompt)", async () => {
    const result = await runPromptCacheScenario({ protocol, layout: "volatile-system" });
    expect(result.cachedShareAfterFirstTurn).toBeLessThan(0.9);
  });
});
