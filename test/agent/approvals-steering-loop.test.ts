/**
 * The loop's approval and steering phases with the scripted fake LLM: a call on the ask-first list
 * makes the run end `waiting` (the other calls of the turn ran), resuming with the checkpoint and a
 * decision continues the same turn; a steering message reaches the next model request.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { AgentEvent } from "../../src/agent/events.js";
import { type RunAgentOptions, runAgent } from "../../src/agent/run-agent.js";
import { SteeringQueue } from "../../src/agent/steering.js";
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
afterAll(async () => server.close());
beforeEach(() => server.reset());

const ran: string[] = [];
const deleteRepo = defineTool({
  name: "github_delete_repo",
  description: "Deletes a repository",
  parameters: z.object({ repo: z.string() }),
  async execute(args) {
    ran.push(args.repo);
    return `deleted ${args.repo}`;
  },
});

function options(overrides: Partial<RunAgentOptions> = {}): RunAgentOptions {
  return {
    model: fakeModel(server, "openai"),
    messages: [{ role: "user", content: "clean up" }],
    tools: new ToolRegistry([calculatorTool, deleteRepo]),
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

describe("approvals in the loop", () => {
  it("waits on an ask-first call while the others run, then resumes from the checkpoint", async () => {
    ran.length = 0;
    server.enqueue(
      {
        toolCalls: [
          { id: "c1", name: "calculator", args: { expression: "2+2" } },
          { id: "c2", name: "github_delete_repo", args: { repo: "old" } },
        ],
      },
      { text: "cleaned up" },
    );
    const first = await collect(options({ askFirst: ["github_*"], approve: async () => "wait" }));
    const waiting = first.at(-1);
    if (waiting?.type !== "waiting") throw new Error(`expected waiting, got ${waiting?.type}`);
    expect(waiting.approvals.map((a) => a.callId)).toEqual(["c2"]);
    expect(waiting.checkpoint.turn?.results.map((r) => r.toolCallId)).toEqual(["c1"]);
    expect(ran).toEqual([]);
    expect(server.requests).toHaveLength(1);

    const checkpoint = structuredClone(waiting.checkpoint);
    checkpoint.turn!.decisions.c2 = { decision: "approve", by: "alice" };
    const second = await collect(
      options({ askFirst: ["github_*"], resume: { checkpoint, reason: "approval" } }),
    );
    expect(second.at(-1)).toMatchObject({ type: "done", answer: "cleaned up" });
    expect(ran).toEqual(["old"]);
    const sent = JSON.stringify(server.requests[1]?.body);
    expect(sent).toContain("deleted old");
    expect(sent).toContain('"c1"');
  });

  it("refuses a call that needs approval when nobody can approve, with the reason", async () => {
    server.enqueue({ toolCalls: [{ name: "github_delete_repo", args: { repo: "x" } }] }, { text: "ok" });
    const events = await collect(options({ askFirst: ["github_delete_repo"] }));
    expect(events.at(-1)?.type).toBe("done");
    expect(JSON.stringify(server.requests[1]?.body)).toContain("nobody can approve it");
  });
});

describe("steering in the loop", () => {
  it("delivers a message pushed during a tool call before the next model request", async () => {
    const steering = new SteeringQueue();
    const slow = defineTool({
      name: "slow",
      description: "takes a while",
      parameters: z.object({}),
      async execute() {
        steering.push("use Python instead");
        return "done";
      },
    });
    server.enqueue({ toolCalls: [{ name: "slow", args: {} }] }, { text: "switching" });
    const events = await collect(options({ tools: new ToolRegistry([slow]), steering }));
    expect(events.some((e) => e.type === "steered")).toBe(true);
    expect(JSON.stringify(server.requests[1]?.body)).toContain("use Python instead");
  });
});
