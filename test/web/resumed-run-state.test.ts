/**
 * A live answer that a restarted server takes over (issue 34, item 9): the page saw the dead
 * process stream text past the last checkpoint; the new process goes on from its stored answer and
 * numbers its events from the next block (RESTART_SEQ_BLOCK). The page follows the new process's
 * text, not the old one's with the new one's appended or interleaved ("Slow line 9 of 50.e 9 of
 * 50."); a snapshot taken meanwhile agrees. And an answer that streams never says "queued".
 */
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/agent/events.js";
import { RESTART_SEQ_BLOCK } from "../../src/team/agent-runner.js";
import { type ChatAction, type ChatState, chatReducer, emptyChat } from "../../web/src/state/chat.js";
import type { MessagePart } from "../../web/src/types.js";
import { message, run } from "./fixtures.js";

const apply = (state: ChatState, ...actions: ChatAction[]) => actions.reduce(chatReducer, state);
const agent = (seq: number, event: AgentEvent): ChatAction => ({
  type: "event",
  event: { type: "agent", channelId: "c1", runId: "r1", seq, event },
});
const delta = (seq: number, text: string) => agent(seq, { type: "text_delta", runId: "r1", text });
const lines = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `Slow line ${from + i} of 50. `);
const textOf = (parts: readonly MessagePart[]) =>
  parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");

function streamedBeforeTheCrash(): ChatState {
  let state = apply(
    emptyChat("c1"),
    { type: "history", channelId: "c1", messages: [message(1, { text: "count to 50" })] },
    { type: "event", event: { type: "run", channelId: "c1", run: run("r1") } },
  );
  // The dead process streamed nine lines (its checkpoint was before the first).
  lines(1, 9).forEach((text, i) => {
    state = apply(state, delta(i + 1, text));
  });
  return state;
}

describe("a live answer resumed by a restarted server", () => {
  it("shows the new process's text only, from its first event on", () => {
    let state = streamedBeforeTheCrash();
    const first = RESTART_SEQ_BLOCK + 1;
    state = apply(state, agent(first, { type: "resumed", runId: "r1", reason: "restart", iteration: 0 }));
    lines(1, 3).forEach((text, i) => {
      state = apply(state, delta(first + 1 + i, text));
    });
    const view = state.runs.r1!;
    expect(view.parts[0]).toEqual({ type: "resumed", reason: "restart" });
    expect(textOf(view.parts)).toBe(lines(1, 3).join(""));
  });

  it("agrees with a snapshot of the new process taken while its events arrive", () => {
    let state = streamedBeforeTheCrash();
    const first = RESTART_SEQ_BLOCK + 1;
    state = apply(
      state,
      agent(first, { type: "resumed", runId: "r1", reason: "restart", iteration: 0 }),
      delta(first + 1, lines(1, 1)[0]!),
      delta(first + 2, lines(2, 2)[0]!),
    );
    // getRun answered after the first two events of the new process.
    const snapshot: MessagePart[] = [
      { type: "resumed", reason: "restart" },
      { type: "text", text: lines(1, 1)[0]! },
    ];
    state = apply(state, { type: "run", run: run("r1", { live: { parts: snapshot, seq: first + 1 } }) });
    state = apply(state, delta(first + 3, lines(3, 3)[0]!));
    expect(textOf(state.runs.r1!.parts)).toBe(lines(1, 3).join(""));
  });

  it("goes on from the stored answer when the run had posted one (it had waited for approval)", () => {
    const stored = message(2, {
      author: { type: "agent", id: "coder" },
      runId: "r1",
      text: "Before the approval.",
      parts: [{ type: "text", text: "Before the approval." }],
    });
    let state = apply(streamedBeforeTheCrash(), { type: "backlog", channelId: "c1", messages: [stored] });
    const first = RESTART_SEQ_BLOCK + 1;
    state = apply(
      state,
      agent(first, { type: "resumed", runId: "r1", reason: "restart", iteration: 1 }),
      delta(first + 1, " After."),
    );
    expect(textOf(state.runs.r1!.parts)).toBe("Before the approval. After.");
  });
});

describe("an answer that streams", () => {
  it("is running, even when the last lifecycle event said queued", () => {
    const state = apply(
      emptyChat("c1"),
      { type: "event", event: { type: "run", channelId: "c1", run: run("r1", { status: "queued" }) } },
      delta(1, "Hello"),
    );
    expect(state.runs.r1?.run?.status).toBe("running");
  });
});
