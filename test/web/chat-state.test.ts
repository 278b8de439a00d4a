import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/agent/events.js";
import {
  activeRuns,
  type ChatAction,
  type ChatState,
  chatReducer,
  currentFlow,
  emptyChat,
  firstMessageId,
  lastMessageId,
  liveRuns,
  mergeMessages,
} from "../../web/src/state/chat.js";
import type { TeamEvent } from "../../web/src/types.js";
import { flow, message, run } from "./fixtures.js";

function apply(state: ChatState, ...actions: ChatAction[]): ChatState {
  return actions.reduce(chatReducer, state);
}

const ev = (event: TeamEvent): ChatAction => ({ type: "event", event });
let seq = 0;
/** An agent event of a run; numbers only grow, as the server's do within a run. */
const agentEv = (channelId: string, runId: string, event: AgentEvent): TeamEvent => ({
  type: "agent",
  channelId,
  runId,
  seq: ++seq,
  event,
});

describe("mergeMessages", () => {
  it("appends newer messages and keeps order", () => {
    const merged = mergeMessages([message(1), message(2)], [message(3), message(5)]);
    expect(merged.map((m) => m.id)).toEqual([1, 2, 3, 5]);
  });

  it("never duplicates: overlapping backlog, out-of-order pages and repeats collapse by id", () => {
    const merged = mergeMessages(
      [message(3), message(4), message(5)],
      [message(4), message(1), message(6), message(3)],
    );
    expect(merged.map((m) => m.id)).toEqual([1, 3, 4, 5, 6]);
  });

  it("the incoming copy of a message wins", () => {
    const merged = mergeMessages([message(1, { text: "old" })], [message(1, { text: "new" })]);
    expect(merged).toEqual([message(1, { text: "new" })]);
  });

  it("returns the same array when nothing comes in", () => {
    const existing = [message(1)];
    expect(mergeMessages(existing, [])).toBe(existing);
  });
});

describe("chatReducer", () => {
  it("merges history pages, backlog and live messages without duplicates", () => {
    const state = apply(
      emptyChat("c1"),
      { type: "history", channelId: "c1", messages: [message(10), message(11)], hasOlder: true },
      { type: "backlog", channelId: "c1", messages: [message(11), message(12)] },
      ev({ type: "message", channelId: "c1", message: message(12) }),
      ev({ type: "message", channelId: "c1", message: message(13) }),
      { type: "history", channelId: "c1", messages: [message(8), message(9)], hasOlder: false },
    );
    expect(state.messages.map((m) => m.id)).toEqual([8, 9, 10, 11, 12, 13]);
    expect(state.loaded).toBe(true);
    expect(state.hasOlder).toBe(false);
    expect(lastMessageId(state)).toBe(13);
    expect(firstMessageId(state)).toBe(8);
  });

  it("a history page without hasOlder keeps the flag", () => {
    const state = apply(
      emptyChat("c1"),
      { type: "history", channelId: "c1", messages: [message(5)], hasOlder: true },
      { type: "history", channelId: "c1", messages: [message(6)] },
    );
    expect(state.hasOlder).toBe(true);
  });

  it("ignores everything addressed to another channel", () => {
    const start = emptyChat("c1");
    const after = apply(
      start,
      { type: "history", channelId: "c2", messages: [message(1, { channelId: "c2" })] },
      { type: "backlog", channelId: "c2", messages: [message(2, { channelId: "c2" })] },
      ev({ type: "message", channelId: "c2", message: message(3, { channelId: "c2" }) }),
      ev(agentEv("c2", "r1", { type: "text_delta", runId: "r1", text: "x" })),
      { type: "run", run: run("r1", { channelId: "c2" }) },
      { type: "flow", flow: flow("f1", { channelId: "c2" }) },
    );
    expect(after).toBe(start);
  });

  it("never moves a run back from running to queued when the POST answer arrives after the WS event", () => {
    const state = apply(
      emptyChat("c1"),
      ev({ type: "run", channelId: "c1", run: run("r1", { status: "running" }) }),
      {
        type: "posted",
        channelId: "c1",
        result: { message: message(1), runs: [run("r1", { status: "queued" })] },
      },
    );
    expect(state.runs.r1?.run?.status).toBe("running");
  });

  it("keeps two concurrent runs' streams apart", () => {
    const state = apply(
      emptyChat("c1"),
      ev({
        type: "run",
        channelId: "c1",
        run: run("r1", { agentId: "coder", status: "queued", startedAt: 1 }),
      }),
      ev({ type: "run", channelId: "c1", run: run("r2", { agentId: "writer", startedAt: 2 }) }),
      ev({ type: "run", channelId: "c1", run: run("r1", { agentId: "coder", startedAt: 1 }) }),
      ev(agentEv("c1", "r1", { type: "text_delta", runId: "r1", text: "Hel" })),
      ev(agentEv("c1", "r2", { type: "text_delta", runId: "r2", text: "Bon" })),
      ev(agentEv("c1", "r2", { type: "reasoning_delta", runId: "r2", text: "thinking " })),
      ev(agentEv("c1", "r1", { type: "text_delta", runId: "r1", text: "lo" })),
      ev(agentEv("c1", "r2", { type: "reasoning_delta", runId: "r2", text: "more" })),
      ev(agentEv("c1", "r2", { type: "text_delta", runId: "r2", text: "jour" })),
    );
    expect(state.runs.r1?.parts).toEqual([{ type: "text", text: "Hello" }]);
    // Reasoning and text interleave in the order they came.
    expect(state.runs.r2?.parts).toEqual([
      { type: "text", text: "Bon" },
      { type: "reasoning", text: "thinking more" },
      { type: "text", text: "jour" },
    ]);
    expect(liveRuns(state).map((v) => v.id)).toEqual(["r1", "r2"]);
    expect(
      activeRuns(state)
        .map((v) => v.id)
        .sort(),
    ).toEqual(["r1", "r2"]);
  });

  it("builds tool cards from tool_call/tool_result, in call order", () => {
    const state = apply(
      emptyChat("c1"),
      ev(
        agentEv("c1", "r1", {
          type: "tool_call",
          runId: "r1",
          id: "a",
          name: "read_file",
          args: { path: "x" },
        }),
      ),
      ev(
        agentEv("c1", "r1", {
          type: "tool_call",
          runId: "r1",
          id: "b",
          name: "web_search",
          args: { q: "y" },
        }),
      ),
      ev(
        agentEv("c1", "r1", {
          type: "tool_call",
          runId: "r1",
          id: "a",
          name: "read_file",
          args: { path: "x" },
        }),
      ),
      ev(
        agentEv("c1", "r1", {
          type: "tool_result",
          runId: "r1",
          id: "b",
          name: "web_search",
          ok: false,
          output: "down",
          durationMs: 40,
        }),
      ),
      ev(
        agentEv("c1", "r1", {
          type: "tool_result",
          runId: "r1",
          id: "a",
          name: "read_file",
          ok: true,
          output: "content",
          durationMs: 3,
        }),
      ),
    );
    expect(state.runs.r1?.parts).toEqual([
      {
        type: "tool",
        callId: "a",
        name: "read_file",
        args: { path: "x" },
        status: "ok",
        output: "content",
        durationMs: 3,
      },
      {
        type: "tool",
        callId: "b",
        name: "web_search",
        args: { q: "y" },
        status: "error",
        output: "down",
        durationMs: 40,
      },
    ]);
  });

  it("a tool_result without its call still produces a card", () => {
    const state = apply(
      emptyChat("c1"),
      ev(
        agentEv("c1", "r1", {
          type: "tool_result",
          runId: "r1",
          id: "z",
          name: "t",
          ok: true,
          output: "o",
          durationMs: 1,
        }),
      ),
    );
    expect(state.runs.r1?.parts).toEqual([
      { type: "tool", callId: "z", name: "t", args: undefined, status: "ok", output: "o", durationMs: 1 },
    ]);
  });

  it("stream events for an unknown run create a placeholder the run record fills in later", () => {
    let state = apply(
      emptyChat("c1"),
      ev(agentEv("c1", "r9", { type: "text_delta", runId: "r9", text: "partial" })),
    );
    expect(state.runs.r9).toMatchObject({
      id: "r9",
      run: undefined,
      parts: [{ type: "text", text: "partial" }],
    });
    expect(activeRuns(state).map((v) => v.id)).toEqual(["r9"]);
    state = apply(state, { type: "run", run: run("r9", { status: "done" }) });
    expect(state.runs.r9?.run?.status).toBe("done");
    expect(state.runs.r9?.parts).toEqual([{ type: "text", text: "partial" }]);
    expect(activeRuns(state)).toEqual([]);
  });

  it("a page that opens mid-run starts from the run's snapshot and applies the events after it", () => {
    const delta = (n: number, text: string): ChatAction =>
      ev({
        type: "agent",
        channelId: "c1",
        runId: "r5",
        seq: n,
        event: { type: "text_delta", runId: "r5", text },
      });
    // Events 7 and 8 arrive before the snapshot (taken at event 7) comes back.
    let state = apply(emptyChat("c1"), delta(7, " world"), delta(8, "!"));
    state = apply(state, {
      type: "run",
      run: run("r5", { status: "running", live: { parts: [{ type: "text", text: "Hello world" }], seq: 7 } }),
    });
    expect(state.runs.r5?.parts).toEqual([{ type: "text", text: "Hello world!" }]);
    // A repeated event changes nothing; the next one is added.
    state = apply(state, delta(8, "!"), delta(9, " Bye."));
    expect(state.runs.r5?.parts).toEqual([{ type: "text", text: "Hello world! Bye." }]);
    // An older snapshot does not take anything back.
    state = apply(state, {
      type: "run",
      run: run("r5", { status: "running", live: { parts: [{ type: "text", text: "Hel" }], seq: 2 } }),
    });
    expect(state.runs.r5?.parts).toEqual([{ type: "text", text: "Hello world! Bye." }]);
  });

  it("a finished run never goes back to running when a stale update arrives", () => {
    const state = apply(
      emptyChat("c1"),
      { type: "run", run: run("r1", { status: "cancelled" }) },
      ev({ type: "run", channelId: "c1", run: run("r1", { status: "running" }) }),
    );
    expect(state.runs.r1?.run?.status).toBe("cancelled");
    const errored = apply(
      state,
      ev({ type: "run", channelId: "c1", run: run("r1", { status: "error", error: "x" }) }),
    );
    expect(errored.runs.r1?.run?.status).toBe("error");
  });

  it("the stored agent message replaces the live bubble of its run", () => {
    let state = apply(
      emptyChat("c1"),
      ev({ type: "run", channelId: "c1", run: run("r1") }),
      ev(agentEv("c1", "r1", { type: "text_delta", runId: "r1", text: "answer" })),
    );
    expect(liveRuns(state).map((v) => v.id)).toEqual(["r1"]);
    state = apply(
      state,
      ev({ type: "run", channelId: "c1", run: run("r1", { status: "done" }) }),
      ev({
        type: "message",
        channelId: "c1",
        message: message(2, { author: { type: "agent", id: "coder" }, runId: "r1", text: "answer" }),
      }),
    );
    expect(liveRuns(state)).toEqual([]);
    expect(state.runs.r1?.run?.status).toBe("done");
  });

  it("removes deleted messages", () => {
    const state = apply(
      emptyChat("c1"),
      { type: "backlog", channelId: "c1", messages: [message(1), message(2)] },
      ev({ type: "message_deleted", channelId: "c1", messageId: 1 }),
    );
    expect(state.messages.map((m) => m.id)).toEqual([2]);
  });

  it("applies a post result: the message, its runs and its flow", () => {
    const state = apply(emptyChat("c1"), {
      type: "posted",
      channelId: "c1",
      result: { message: message(7), runs: [run("r1", { status: "queued" })], flow: flow("f1") },
    });
    expect(state.messages.map((m) => m.id)).toEqual([7]);
    expect(state.runs.r1?.run?.status).toBe("queued");
    expect(currentFlow(state)?.id).toBe("f1");
  });

  it("keeps the newest version of each flow and shows the most recently updated one", () => {
    const state = apply(
      emptyChat("c1"),
      ev({ type: "flow", channelId: "c1", flow: flow("f1", { status: "paused", updatedAt: 5 }) }),
      { type: "flow", flow: flow("f1", { status: "running", updatedAt: 4 }) },
      ev({ type: "flow", channelId: "c1", flow: flow("f0", { status: "done", updatedAt: 2 }) }),
    );
    expect(state.flows.f1?.status).toBe("paused");
    expect(currentFlow(state)?.id).toBe("f1");
  });
});

describe("requests for input", () => {
  it("holds the open requests of the open channel and drops them when they close", () => {
    const request = {
      id: "e1",
      channelId: "c1",
      runId: "r1",
      userId: "u1",
      server: "feat",
      message: "Name?",
      mode: "form" as const,
      requestedSchema: { type: "object" as const, properties: { name: { type: "string" as const } } },
      expiresAt: 1,
    };
    const asked = apply(
      emptyChat("c1"),
      ev({ type: "elicitation", channelId: "c1", runId: "r1", userId: "u1", request }),
      ev({
        type: "elicitation",
        channelId: "c2",
        runId: "r2",
        userId: "u1",
        request: { ...request, id: "e2", channelId: "c2" },
      }),
    );
    expect(Object.keys(asked.elicitations ?? {})).toEqual(["e1"]);
    const closed = apply(
      asked,
      ev({
        type: "elicitation_closed",
        channelId: "c1",
        runId: "r1",
        userId: "u1",
        id: "e1",
        action: "accept",
      }),
    );
    expect(closed.elicitations).toEqual({});
  });
});
