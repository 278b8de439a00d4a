/**
 * History is the record: an answer is stored with its parts in order (reasoning, text, tool calls
 * with their results and durations), a regenerated answer is a new version of the first, and a
 * person's last message can be edited and answered again; each with its access checks.
 */
import { describe, expect, it } from "vitest";
import type { DimsumError } from "../../src/errors.js";
import type { ChannelRecord } from "../../src/team/types.js";
import type { FakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { agentOf, alice, bob, groupSuite, guest, lastUserText, owner, type TeamHarness } from "./harness.js";

let server: FakeLlmServer;
let h: TeamHarness;
let group: ChannelRecord;
const scripts = groupSuite(
  { name: "History", leaderAgentId: "assistant", agentIds: ["assistant", "coder"], userIds: ["bob"] },
  (suite) => {
    ({ server, h, group } = suite);
  },
);

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    return (err as DimsumError).code;
  }
  throw new Error("expected a refusal");
}

describe("channel message history", () => {
  it("stores an answer's reasoning, text and tool calls in order", async () => {
    scripts.add(
      "assistant",
      {
        reasoning: "The person wants the time.",
        text: "Checking the clock.",
        toolCalls: [{ name: "current_time", args: {} }],
      },
      { text: "It is now." },
    );
    const { runs } = await h.team.postMessage(alice, group.id, "what time is it?");
    expect((await h.finished(runs[0]!.id)).status).toBe("done");
    const [question, answer] = await h.team.listMessages(alice, group.id);
    expect(question?.parts).toEqual([{ type: "text", text: "what time is it?" }]);
    expect(answer?.replyTo).toBe(question?.id);
    expect(answer?.parts.map((p) => p.type)).toEqual(["reasoning", "text", "tool", "text"]);
    expect(answer?.parts[0]).toEqual({ type: "reasoning", text: "The person wants the time." });
    expect(answer?.parts[2]).toMatchObject({
      type: "tool",
      name: "current_time",
      args: {},
      status: "ok",
      durationMs: expect.any(Number),
      output: expect.any(String),
    });
    // The team forwarded the agent's own events: usage and the run's end are among them.
    expect(h.sawAgentEvent(runs[0]!.id, "usage")).toBe(true);
    expect(h.sawAgentEvent(runs[0]!.id, "done")).toBe(true);
  });

  it("reports a live run's parts so far, with the number of its last event", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    scripts.add(
      "assistant",
      { text: "Looking.", toolCalls: [{ name: "current_time", args: {} }] },
      async () => {
        await gate;
        return { text: "Done." };
      },
    );
    const { runs } = await h.team.postMessage(alice, group.id, "slowly please");
    const runId = runs[0]!.id;
    await h.waitFor((e) => e.type === "agent" && e.runId === runId && e.event.type === "tool_result");
    const live = await h.team.getRun(alice, runId);
    expect(live.live?.parts.map((p) => p.type)).toEqual(["text", "tool"]);
    const lastSeq = h.events.flatMap((e) => (e.type === "agent" && e.runId === runId ? [e.seq] : [])).at(-1);
    expect(live.live?.seq).toBe(lastSeq);
    release();
    await h.finished(runId);
    expect((await h.team.getRun(alice, runId)).live).toBeUndefined();
  });

  it("regenerates an answer as a new version and keeps the old one", async () => {
    scripts.add("assistant", { text: "first answer" }, { text: "second answer" }, { text: "third answer" });
    const posted = await h.team.postMessage(alice, group.id, "tell me something");
    await h.finished(posted.runs[0]!.id);
    const first = (await h.team.listMessages(alice, group.id)).at(-1)!;

    const again = await h.team.regenerate(bob, first.id);
    expect(again.message.id).toBe(posted.message.id);
    expect((await h.finished(again.runs[0]!.id)).status).toBe("done");
    const second = (await h.team.listMessages(alice, group.id)).at(-1)!;
    expect(second).toMatchObject({ text: "second answer", versionOf: first.id, replyTo: posted.message.id });
    // The agent was asked the same message again.
    const asked = server.requests.filter((r) => agentOf(r) === "assistant").at(-1);
    expect(lastUserText(asked)).toContain("[alice] tell me something");

    // Regenerating a later version still names the first one.
    const third = await h.team.regenerate(alice, second.id);
    await h.finished(third.runs[0]!.id);
    const all = await h.team.listMessages(alice, group.id);
    expect(all.map((m) => [m.text, m.versionOf])).toEqual([
      ["tell me something", undefined],
      ["first answer", undefined],
      ["second answer", first.id],
      ["third answer", first.id],
    ]);

    expect(await refusal(h.team.regenerate(alice, posted.message.id))).toBe("invalid");
    // Someone outside the channel is not told it exists.
    expect(await refusal(h.team.regenerate(guest, first.id))).toBe("not_found");
    expect(await refusal(h.team.regenerate(alice, 999_999))).toBe("not_found");
  });

  it("edits the person's own last message and answers the edited text as a new version", async () => {
    scripts.add("assistant", { text: "about cats" }, { text: "about dogs" });
    const posted = await h.team.postMessage(alice, group.id, "tell me about cats");
    await h.finished(posted.runs[0]!.id);
    const answer = (await h.team.listMessages(alice, group.id)).at(-1)!;

    expect(await refusal(h.team.editMessage(bob, posted.message.id, "hijacked"))).toBe("forbidden");
    expect(await refusal(h.team.editMessage(owner, posted.message.id, "hijacked"))).toBe("forbidden");
    expect(await refusal(h.team.editMessage(alice, posted.message.id, "  "))).toBe("invalid");

    const edited = await h.team.editMessage(alice, posted.message.id, "tell me about dogs");
    expect(edited.message).toMatchObject({
      id: posted.message.id,
      text: "tell me about dogs",
      parts: [{ type: "text", text: "tell me about dogs" }],
      editedAt: expect.any(Number),
    });
    await h.finished(edited.runs[0]!.id);
    const asked = server.requests.filter((r) => agentOf(r) === "assistant").at(-1);
    expect(lastUserText(asked)).toContain("[alice] tell me about dogs");
    const all = await h.team.listMessages(alice, group.id);
    expect(all.map((m) => [m.text, m.versionOf])).toEqual([
      ["tell me about dogs", undefined],
      ["about cats", undefined],
      ["about dogs", answer.id],
    ]);
    // Search finds the edited text, not the old one.
    expect((await h.team.searchMessages(alice, "dogs")).map((m) => m.id)).toContain(posted.message.id);
    expect((await h.team.searchMessages(alice, "cats")).map((m) => m.id)).not.toContain(posted.message.id);

    // Only the last message of its author can be edited.
    const later = await h.team.postMessage(alice, group.id, "@coder one more");
    await h.finished(later.runs[0]!.id);
    expect(await refusal(h.team.editMessage(alice, posted.message.id, "too late"))).toBe("conflict");
  });

  it("stores a failed answer with its error, after the message it answered", async () => {
    scripts.add("assistant", { error: { status: 400 } });
    const { runs, message } = await h.team.postMessage(alice, group.id, "break please");
    const run = await h.finished(runs[0]!.id);
    expect(run.status).toBe("error");
    const answer = (await h.team.listMessages(alice, group.id)).at(-1);
    expect(answer).toMatchObject({ author: { type: "agent", id: "assistant" }, replyTo: message.id });
    expect(answer?.parts).toEqual([expect.objectContaining({ type: "error", message: run.error })]);
  });
});
