import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { estimateTextTokens } from "../../src/agent/context/index.js";
import type { AgentEvent } from "../../src/agent/events.js";
import { runSessionTurn, type SessionTurnOptions } from "../../src/agent/session-runner.js";
import { isTurnContext } from "../../src/agent/turn-context.js";
import { openDatabase } from "../../src/store/database.js";
import { SqliteSessionStore } from "../../src/store/sqlite-session-store.js";
import type { SessionRef } from "../../src/store/types.js";
import {
  type FakeLlmServer,
  type RecordedRequest,
  startFakeLlmServer,
} from "../../src/testing/fake-llm-server.js";
import { defaultToolsConfig } from "../../src/tools/builtin/defaults.js";
import { createBuiltinRegistry } from "../../src/tools/builtin/index.js";
import { fakeModel, fastRetry } from "../support/fake-models.js";

let server: FakeLlmServer;
let store: SqliteSessionStore;
let close: () => void;

beforeAll(async () => {
  server = await startFakeLlmServer({ strict: true });
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.reset();
  const db = openDatabase(join(mkdtempSync(join(tmpdir(), "dimsum-session-")), "dimsum.db"));
  store = new SqliteSessionStore(db);
  close = () => db.close();
});
afterEach(() => close());

async function turn(
  ref: SessionRef,
  input: string,
  overrides: Partial<SessionTurnOptions> = {},
): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of runSessionTurn({
    store,
    ref,
    model: fakeModel(server, "openai"),
    input,
    tools: createBuiltinRegistry(),
    toolEnvironment: { workspace: process.cwd(), config: defaultToolsConfig() },
    streamOptions: fastRetry,
    secrets: ["sk-very-secret-key"],
    ...overrides,
  })) {
    events.push(event);
  }
  return events;
}

type OpenAiMessage = {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ id: string }>;
  tool_call_id?: string;
};
const messagesOf = (request: RecordedRequest | undefined) =>
  (request?.body as { messages?: OpenAiMessage[] } | undefined)?.messages ?? [];

/** Every tool message in a request answers a call made earlier in the same request, and every call is answered. */
function assertToolPairsIntact(messages: OpenAiMessage[]): void {
  const open = new Set<string>();
  for (const m of messages) {
    if (m.role === "assistant") {
      expect(open.size).toBe(0);
      for (const call of m.tool_calls ?? []) open.add(call.id);
    } else if (m.role === "tool") {
      expect(open.has(m.tool_call_id ?? "")).toBe(true);
      open.delete(m.tool_call_id ?? "");
    } else {
      expect(open.size).toBe(0);
    }
  }
  expect(open.size).toBe(0);
}

describe("sessions", () => {
  it("keeps messages, todos and traces apart per user and per session", async () => {
    const a1 = { userId: "A", sessionId: "window1" };
    const a2 = { userId: "A", sessionId: "window2" };
    const b1 = { userId: "B", sessionId: "window1" };
    for (const [ref, task] of [
      [a1, "buy milk"],
      [a2, "write report"],
      [b1, "call mom"],
    ] as const) {
      server.enqueue(
        { toolCalls: [{ name: "todo", args: { action: "add", text: task } }] },
        { text: `noted ${task}` },
      );
      await turn(ref, `remember to ${task}`);
    }
    server.enqueue({ text: "second answer" });
    await turn(a1, "what did I ask?");

    // The model saw only A:window1's history in that session's second turn.
    const request = JSON.stringify(server.requests.at(-1)?.body);
    expect(request).toContain("buy milk");
    expect(request).not.toContain("write report");
    expect(request).not.toContain("call mom");

    expect((await store.getTodos(a1)).map((t) => t.text)).toEqual(["buy milk"]);
    expect((await store.getTodos(a2)).map((t) => t.text)).toEqual(["write report"]);
    expect((await store.getTodos(b1)).map((t) => t.text)).toEqual(["call mom"]);
    // The second turn's context (its open todo) is stored right after its question, apart from it.
    const a1Messages = await store.loadMessages(a1);
    expect(a1Messages).toHaveLength(7);
    expect(a1Messages.map((m) => isTurnContext(m.message))).toEqual([
      false,
      false,
      false,
      false,
      false,
      true,
      false,
    ]);
    expect(JSON.stringify(a1Messages[5]?.message)).toContain("buy milk");
    expect(await store.loadMessages(b1)).toHaveLength(4);

    const runsA1 = await store.listRuns(a1);
    expect(runsA1).toHaveLength(2);
    const b1Runs = await store.listRuns(b1);
    expect(await store.getRunEvents(b1, runsA1[0]?.id ?? "")).toEqual([]);
    expect(await store.findRun("B", runsA1[0]?.id ?? "")).toBeUndefined();
    const traceB = await store.getRunEvents(b1, b1Runs[0]?.id ?? "");
    expect(traceB.map((e) => e.type)).toContain("tool_result");
    expect(JSON.stringify(traceB)).toContain("call mom");
    expect(JSON.stringify(traceB)).not.toContain("buy milk");
  });

  it("records a trace with model calls, tool calls and results, without secrets", async () => {
    const ref = { userId: "A", sessionId: "t" };
    server.enqueue(
      { toolCalls: [{ name: "calculator", args: { expression: "2+2" } }], usage: { input: 50, output: 5 } },
      { text: "4, and the key is sk-very-secret-key", usage: { input: 60, output: 6 } },
    );
    const events = await turn(ref, "2+2?");
    const runId = events[0]?.runId ?? "";
    const trace = await store.getRunEvents(ref, runId);
    const types = trace.map((e) => e.type);
    expect(types).toEqual(
      expect.arrayContaining(["run_start", "model_call", "tool_call", "tool_result", "done"]),
    );
    expect(types.filter((t) => t === "model_call")).toHaveLength(2);
    expect(types).not.toContain("text_delta");
    expect(JSON.stringify(trace)).not.toContain("sk-very-secret-key");
    expect((await store.getRun(ref, runId))?.status).toBe("done");
  });

  it("compacts a long conversation: summary stored, tool pairs intact, requests fit, early facts survive", async () => {
    const ref = { userId: "A", sessionId: "long" };
    const contextWindow = 6_000;
    const model = fakeModel(server, "openai", { contextWindow, maxOutputTokens: 500 });
    // The fake model writes a summary from the transcript it is given, keeping lines that mention the cat.
    const summariser = (request: RecordedRequest) => {
      const text = JSON.stringify(request.body);
      const facts = [...new Set(text.match(/cat is called \w+/g) ?? [])];
      return { text: `Summary so far: the user's ${facts.join(", ") || "nothing notable"}.` };
    };
    const isSummaryRequest = (request: RecordedRequest) =>
      JSON.stringify(request.body).includes("running summary");
    const reply = (request: RecordedRequest) => (isSummaryRequest(request) ? summariser(request) : undefined);

    const tools = createBuiltinRegistry(["calculator"]);
    const requests: RecordedRequest[] = [];
    for (let i = 0; i < 14; i++) {
      const filler = `Turn ${i}: ${"here is a long paragraph about aeronautics and boundary layers. ".repeat(20)}`;
      const input = i === 0 ? `My cat is called Miso. ${filler}` : filler;
      server.enqueue(
        (r) => reply(r) ?? { toolCalls: [{ name: "calculator", args: { expression: `${i} * 3` } }] },
        (r) => reply(r) ?? { text: `answer ${i}: ${"details ".repeat(60)}` },
        (r) => reply(r) ?? { text: `answer ${i}` },
      );
      const events = await turn(ref, input, { model, tools });
      expect(events.at(-1)?.type).toBe("done");
      requests.push(...server.requests);
      server.reset(); // drops the unused third turn when no summary was asked for
    }
    const summary = await store.getSummary(ref);
    expect(summary).toContain("cat is called Miso");

    expect(requests.filter(isSummaryRequest).length).toBeGreaterThan(0);
    const modelRequests = requests.filter((r) => !isSummaryRequest(r));
    expect(modelRequests.length).toBeGreaterThan(0);
    for (const request of modelRequests) {
      const messages = messagesOf(request);
      assertToolPairsIntact(messages);
      const tokens = estimateTextTokens(JSON.stringify(request.body));
      expect(tokens).toBeLessThan(contextWindow);
    }
    const last = modelRequests.at(-1);
    const system = messagesOf(last)[0];
    expect(system?.role).toBe("system");
    expect(String(system?.content)).toContain("cat is called Miso");
    // The live context lost the first turn; the full history is still stored.
    expect(JSON.stringify(messagesOf(last).slice(1))).not.toContain("My cat is called Miso");
    const all = await store.loadMessages(ref, { includeCompacted: true });
    expect(JSON.stringify(all[0]?.message)).toContain("My cat is called Miso");
    const compactions = (await store.listRuns(ref)).length;
    expect(compactions).toBe(14);
  });

  it("falls back to truncation when summarising fails, and says so", async () => {
    const ref = { userId: "A", sessionId: "fallback" };
    const model = fakeModel(server, "openai", { contextWindow: 3_000, maxOutputTokens: 300 });
    const tools = createBuiltinRegistry(["calculator"]);
    let sawTruncate = false;
    for (let i = 0; i < 8; i++) {
      server.enqueue((r) =>
        JSON.stringify(r.body).includes("running summary")
          ? { error: { status: 400 } }
          : { text: `reply ${i} ${"words ".repeat(80)}` },
      );
      server.enqueue((r) =>
        JSON.stringify(r.body).includes("running summary")
          ? { error: { status: 400 } }
          : { text: `reply ${i}` },
      );
      const events = await turn(ref, `question ${i} ${"context ".repeat(150)}`, { model, tools });
      expect(events.at(-1)?.type).toBe("done");
      const truncation = events.find((e) => e.type === "compaction" && e.method === "truncate");
      if (truncation && truncation.type === "compaction") {
        sawTruncate = true;
        expect(truncation.note).toMatch(/summarising failed/);
        const trace = await store.getRunEvents(ref, truncation.runId);
        expect(trace.some((e) => e.type === "compaction")).toBe(true);
      }
      server.reset();
    }
    expect(sawTruncate).toBe(true);
  });
});
