import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { AgentEvent } from "../../src/agent/events.js";
import { type RunAgentOptions, runAgent } from "../../src/agent/run-agent.js";
import type { Message, WireProtocol } from "../../src/llm/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { calculatorTool } from "../../src/tools/builtin/calculator.js";
import { defaultToolsConfig } from "../../src/tools/builtin/defaults.js";
import { memoryTodoStore } from "../../src/tools/memory-todo-store.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { defineTool } from "../../src/tools/types.js";
import { fakeModel, fastRetry } from "../support/fake-models.js";

let server: FakeLlmServer;

beforeAll(async () => {
  server = await startFakeLlmServer({ strict: true });
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => server.reset());

function options(protocol: WireProtocol, overrides: Partial<RunAgentOptions> = {}): RunAgentOptions {
  return {
    model: fakeModel(server, protocol),
    messages: [{ role: "user", content: "What is 6 * 7?" }],
    tools: new ToolRegistry([calculatorTool]),
    toolEnvironment: { workspace: process.cwd(), todos: memoryTodoStore(), config: defaultToolsConfig() },
    streamOptions: fastRetry,
    ...overrides,
  };
}

async function collect(opts: RunAgentOptions): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of runAgent(opts)) events.push(event);
  return events;
}

function only<T extends AgentEvent["type"]>(
  events: AgentEvent[],
  type: T,
): Extract<AgentEvent, { type: T }>[] {
  return events.filter((e): e is Extract<AgentEvent, { type: T }> => e.type === type);
}

/** The tool results the model received in a request body, whatever the protocol. */
function toolResultsIn(body: unknown): string {
  return JSON.stringify(body);
}

describe.each<WireProtocol>(["openai", "anthropic", "gemini"])(
  "calculator round trip over %s",
  (protocol) => {
    it("calls the tool, sends the result back and answers", async () => {
      server.enqueue({ toolCalls: [{ name: "calculator", args: { expression: "6 * 7" } }] }, (request) => ({
        text: toolResultsIn(request.body).includes("42") ? "The answer is 42." : "missing result",
      }));
      const events = await collect(options(protocol));
      const results = only(events, "tool_result");
      expect(results).toHaveLength(1);
      expect(results[0]).toMatchObject({ name: "calculator", ok: true, output: "42" });
      const done = only(events, "done")[0];
      expect(done).toMatchObject({ answer: "The answer is 42.", iterations: 2, capReached: false });
      expect(events.at(-1)?.type).toBe("done");
      expect(server.requests).toHaveLength(2);
      expect(server.requests.every((r) => r.protocol === protocol)).toBe(true);
      // The second request carried the assistant tool call and its result.
      const second = JSON.stringify(server.requests[1]?.body);
      expect(second).toContain("calculator");
      expect(second).toContain("42");
    });
  },
);

describe("runAgent", () => {
  it("retries a 429 and then succeeds", async () => {
    server.enqueue({ error: { status: 429, headers: { "retry-after": "0" } } }, { text: "fine" });
    const events = await collect(options("openai"));
    expect(only(events, "retry")).toHaveLength(1);
    expect(only(events, "done")[0]?.answer).toBe("fine");
    expect(server.requests).toHaveLength(2);
  });

  it("gives both of two parallel calls a result when one has malformed JSON arguments", async () => {
    server.enqueue(
      {
        toolCalls: [
          { name: "calculator", args: { expression: "2 + 2" }, id: "call_good" },
          { name: "calculator", args: '{"expression": "3 +', id: "call_bad" },
        ],
      },
      { text: "recovered" },
    );
    const events = await collect(options("openai"));
    const results = only(events, "tool_result");
    expect(results.map((r) => [r.id, r.ok]).sort()).toEqual([
      ["call_bad", false],
      ["call_good", true],
    ]);
    expect(results.find((r) => r.id === "call_bad")?.output).toMatch(/not valid JSON/i);
    const messages = only(events, "messages")[0]?.messages ?? [];
    // Results go back in call order.
    expect(messages.slice(1).map((m) => (m.role === "tool" ? m.toolCallId : ""))).toEqual([
      "call_good",
      "call_bad",
    ]);
    expect(only(events, "done")[0]?.answer).toBe("recovered");
  });

  it("stops offering tools at the cap and makes one final call without tools", async () => {
    server.enqueue(
      { toolCalls: [{ name: "calculator", args: { expression: "1+1" } }] },
      { toolCalls: [{ name: "calculator", args: { expression: "2+2" } }] },
      { text: "final answer" },
    );
    const events = await collect(options("openai", { maxIterations: 2 }));
    const done = only(events, "done")[0];
    expect(done).toMatchObject({ capReached: true, iterations: 3, answer: "final answer" });
    const bodies = server.requests.map((r) => r.body as { tools?: unknown[] });
    expect(bodies[0]?.tools).toBeDefined();
    expect(bodies[1]?.tools).toBeDefined();
    expect(bodies[2]?.tools).toBeUndefined();
    expect(only(events, "turn_start").map((t) => t.toolsOffered)).toEqual([true, true, false]);
  });

  it("drops tool calls a model makes after tools were withdrawn, keeping the history valid", async () => {
    server.enqueue(
      { toolCalls: [{ name: "calculator", args: { expression: "1+1" } }] },
      { text: "stubborn", toolCalls: [{ name: "calculator", args: { expression: "9" } }] },
    );
    const events = await collect(options("openai", { maxIterations: 1 }));
    const last = only(events, "messages").at(-1)?.messages[0];
    expect(last?.role).toBe("assistant");
    expect(JSON.stringify(last)).not.toContain("tool_call");
    expect(only(events, "done")[0]).toMatchObject({ capReached: true, answer: "stubborn" });
  });

  it("refuses the third identical call", async () => {
    const same = { toolCalls: [{ name: "calculator", args: { expression: "1+1" } }] };
    server.enqueue(same, same, same, { text: "ok, stopping" });
    const events = await collect(options("openai"));
    const results = only(events, "tool_result");
    expect(results.map((r) => r.ok)).toEqual([true, true, false]);
    expect(results[2]?.output).toMatch(/already called 2 times/);
    expect(only(events, "done")[0]?.answer).toBe("ok, stopping");
  });

  it("turns unknown tools and schema failures into error results the model can read", async () => {
    server.enqueue(
      {
        toolCalls: [
          { name: "nope", args: {} },
          { name: "calculator", args: { expression: 42 } },
        ],
      },
      { text: "done" },
    );
    const events = await collect(options("anthropic"));
    const [unknown, invalid] = only(events, "tool_result");
    expect(unknown?.ok).toBe(false);
    expect(unknown?.output).toMatch(/nope/);
    expect(invalid?.ok).toBe(false);
    expect(invalid?.output).toMatch(/expression/);
    const second = JSON.stringify(server.requests[1]?.body);
    expect(second).toContain("is_error");
  });

  it("runs safe calls concurrently, unsafe ones alone, and returns results in call order", async () => {
    const log: string[] = [];
    const slow = (name: string, ms: number, concurrencySafe: boolean) =>
      defineTool({
        name,
        description: name,
        parameters: z.object({}),
        concurrencySafe,
        execute: async () => {
          log.push(`start ${name}`);
          await new Promise((r) => setTimeout(r, ms));
          log.push(`end ${name}`);
          return name;
        },
      });
    const tools = new ToolRegistry([slow("a", 40, true), slow("b", 5, true), slow("lock", 5, false)]);
    server.enqueue(
      {
        toolCalls: [
          { name: "a", args: {}, id: "1" },
          { name: "b", args: {}, id: "2" },
          { name: "lock", args: {}, id: "3" },
        ],
      },
      { text: "ok" },
    );
    const events = await collect(options("openai", { tools }));
    expect(log).toEqual(["start a", "start b", "end b", "end a", "start lock", "end lock"]);
    // Events arrive in execution order; messages in call order.
    expect(only(events, "tool_result").map((r) => r.name)).toEqual(["b", "a", "lock"]);
    const toolMessages = only(events, "messages")[0]?.messages.filter((m) => m.role === "tool") ?? [];
    expect(toolMessages.map((m) => (m as { toolName: string }).toolName)).toEqual(["a", "b", "lock"]);
  });

  it("cuts tool results over the budget and says how much", async () => {
    const big = defineTool({
      name: "big",
      description: "big output",
      parameters: z.object({}),
      execute: async () => "x".repeat(50_000),
    });
    server.enqueue({ toolCalls: [{ name: "big", args: {} }] }, { text: "ok" });
    const events = await collect(
      options("openai", { tools: new ToolRegistry([big]), maxToolResultChars: 1_000 }),
    );
    const result = only(events, "tool_result")[0];
    expect(result?.truncatedChars).toBeGreaterThan(48_000);
    expect(result?.output.length).toBeLessThanOrEqual(1_000);
    expect(result?.output).toMatch(/characters cut/);
  });

  it("stops cleanly on abort during a tool call: an error event and no half-written turn", async () => {
    const controller = new AbortController();
    const hang = defineTool({
      name: "hang",
      description: "waits for abort",
      parameters: z.object({}),
      execute: (_args, ctx) =>
        new Promise((resolve) => {
          ctx.signal.addEventListener("abort", () => resolve("stopped"));
          setTimeout(() => controller.abort(), 10);
        }),
    });
    server.enqueue({ toolCalls: [{ name: "hang", args: {} }] }, { text: "never" });
    const events = await collect(
      options("openai", { tools: new ToolRegistry([hang]), signal: controller.signal }),
    );
    expect(events.at(-1)).toMatchObject({ type: "error", code: "aborted" });
    expect(only(events, "messages")).toHaveLength(0);
    expect(server.requests).toHaveLength(1);
  });

  it("reports a provider error as the final event without throwing", async () => {
    server.enqueue({ error: { status: 401 } });
    const events = await collect(
      options("openai", { model: { ...fakeModel(server, "openai"), apiKeyEnv: "OPENAI_API_KEY" } }),
    );
    expect(events.at(-1)).toMatchObject({ type: "error", code: "auth" });
    expect(JSON.stringify(events.at(-1))).toContain("OPENAI_API_KEY");
  });

  it("does not mutate the caller's messages and sums usage over turns", async () => {
    const messages: Message[] = [{ role: "user", content: "hi" }];
    server.enqueue(
      { toolCalls: [{ name: "calculator", args: { expression: "1" } }], usage: { input: 10, output: 5 } },
      { text: "bye", usage: { input: 20, output: 7 } },
    );
    const events = await collect(options("openai", { messages }));
    expect(messages).toHaveLength(1);
    expect(only(events, "done")[0]?.usage).toMatchObject({ inputTokens: 30, outputTokens: 12 });
  });
});
