/** An agent run against the fake LLM calls tools from a real MCP server, including one that crashed. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/agent/events.js";
import { runAgent } from "../../src/agent/run-agent.js";
import { McpManager } from "../../src/mcp/manager.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { calculatorTool } from "../../src/tools/builtin/calculator.js";
import { defaultToolsConfig } from "../../src/tools/builtin/defaults.js";
import { memoryTodoStore } from "../../src/tools/memory-todo-store.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { fakeModel, fastRetry } from "../support/fake-models.js";
import { everything, testEnv, waitFor } from "./helpers.js";

describe("agent run with MCP tools", () => {
  let llm: FakeLlmServer;
  let manager: McpManager;

  beforeAll(async () => {
    llm = await startFakeLlmServer({ strict: true });
    // MCP tools join the built-ins in the registry the agent gets.
    manager = new McpManager({
      servers: [everything()],
      env: testEnv,
      registry: new ToolRegistry([calculatorTool]),
    });
    await manager.start();
  });
  afterAll(async () => {
    await manager.close();
    await llm.close();
  });

  async function run(prompt: string): Promise<AgentEvent[]> {
    const events: AgentEvent[] = [];
    for await (const event of runAgent({
      model: fakeModel(llm, "openai"),
      messages: [{ role: "user", content: prompt }],
      tools: manager.registry,
      toolEnvironment: { workspace: process.cwd(), todos: memoryTodoStore(), config: defaultToolsConfig() },
      streamOptions: fastRetry,
    })) {
      events.push(event);
    }
    return events;
  }

  it("offers the MCP tools to the model and feeds their results back", async () => {
    llm.enqueue(
      {
        toolCalls: [
          { name: "everything_get-sum", args: { a: 20, b: 22 } },
          { name: "calculator", args: { expression: "2 * 21" } },
        ],
      },
      (request) => ({ text: JSON.stringify(request.body).includes("42") ? "Both say 42." : "no result" }),
    );
    const events = await run("Add 20 and 22 two ways.");
    const offered = JSON.stringify(llm.requests[0]?.body);
    expect(offered).toContain('"everything_get-sum"');
    expect(offered).toContain('"calculator"');
    const results = events.filter((e) => e.type === "tool_result");
    expect(results).toHaveLength(2);
    expect(results.every((r) => r.type === "tool_result" && r.ok)).toBe(true);
    expect(events.at(-1)?.type).toBe("done");
    expect(JSON.stringify(events)).toContain("Both say 42.");
  });

  it("brings a crashed server back when the model calls one of its tools", async () => {
    process.kill(manager.status("everything")?.pid as number, "SIGKILL");
    await waitFor(() => manager.status("everything")?.state === "failed", 10_000, "failed state");
    llm.enqueue(
      { toolCalls: [{ name: "everything_echo", args: { message: "still there?" } }] },
      (request) => ({
        text: JSON.stringify(request.body).includes("Echo: still there?") ? "It came back." : "It did not.",
      }),
    );
    const events = await run("Echo something.");
    expect(JSON.stringify(events)).toContain("It came back.");
    expect(manager.status("everything")?.state).toBe("connected");
  });
});
