import { describe, expect, it } from "vitest";
import type { ChannelRecord, TeamEvent } from "../../src/team/types.js";
import type { FakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { agentOf, alice, groupSuite, lastToolResult, lastUserText, type TeamHarness } from "./harness.js";

let server: FakeLlmServer;
let h: TeamHarness;
let group: ChannelRecord;
const scripts = groupSuite(
  {
    name: "Calls",
    leaderAgentId: "assistant",
    agentIds: ["assistant"],
    userIds: [],
  },
  (suite) => {
    ({ server, h, group } = suite);
  },
);

const call = (agentId: string, task: string, context?: string) => ({
  toolCalls: [{ name: "call_agent", args: context ? { agentId, task, context } : { agentId, task } }],
});
/** A final turn that answers with the tool result it was given. */
const echoToolResult = (prefix: string) => (request: Parameters<typeof lastToolResult>[0]) => ({
  text: `${prefix}: ${lastToolResult(request)}`,
});

const runEvents = (events: TeamEvent[]) =>
  events.filter((e): e is Extract<TeamEvent, { type: "run" }> => e.type === "run");

describe("call_agent", () => {
  it("runs the other agent and returns its answer as the tool result", async () => {
    scripts.add("assistant", call("coder", "write fizzbuzz", "in TypeScript"), echoToolResult("coder says"));
    scripts.add("coder", { text: "const fizz = 42;" });

    const { runs } = await h.team.postMessage(alice, group.id, "I need fizzbuzz");
    const parent = await h.finished(runs[0]!.id);
    expect(parent.status).toBe("done");

    const coderRequest = server.requests.find((r) => agentOf(r) === "coder");
    expect(lastUserText(coderRequest)).toBe("write fizzbuzz\n\nContext:\nin TypeScript");
    const messages = await h.team.listMessages(alice, group.id);
    // Only the outer answer reaches the channel; the nested answer went to the caller.
    expect(messages.map((m) => m.text)).toEqual(["I need fizzbuzz", "coder says: const fizz = 42;"]);

    const nested = runEvents(h.events).find((e) => e.run.agentId === "coder" && e.run.status === "done")?.run;
    expect(nested).toMatchObject({ depth: 1, parentRunId: parent.id, channelId: group.id });
    const toolEnd = h.agentEvents(parent.id).find((e) => e.type === "tool_result");
    expect(toolEnd).toMatchObject({ name: "call_agent", ok: true, output: "const fizz = 42;" });
    // The nested run's own stream is visible too.
    expect(h.sawAgentEvent(nested?.id, "text_delta")).toBe(true);
    // The called agent's run is stored inside the calling answer, after the call.
    const answer = messages.at(-1);
    expect(answer?.parts.map((p) => p.type)).toEqual(["tool", "agent_run", "text"]);
    expect(answer?.parts[1]).toMatchObject({
      type: "agent_run",
      runId: nested?.id,
      agentId: "coder",
      status: "done",
      parts: [{ type: "text", text: "const fizz = 42;" }],
    });
    expect(await h.team.getRun(alice, nested!.id)).toMatchObject({ depth: 1, status: "done" });
  });

  it("refuses nesting deeper than three levels", async () => {
    scripts.add("assistant", call("coder", "level 1"), echoToolResult("assistant got"));
    scripts.add("coder", call("writer", "level 2"), echoToolResult("coder got"));
    scripts.add("writer", call("editor", "level 3"), echoToolResult("writer got"));
    scripts.add("editor", call("translator", "level 4"), echoToolResult("editor got"));

    const { runs } = await h.team.postMessage(alice, group.id, "go deep");
    expect((await h.finished(runs[0]!.id)).status).toBe("done");
    const editorFinal = server.requests.filter((r) => agentOf(r) === "editor").at(-1);
    expect(lastToolResult(editorFinal)).toContain("call_agent nesting is limited to 3 levels");
    expect(lastToolResult(editorFinal)).toContain("@assistant → @coder → @writer → @editor → @translator");
    expect(server.requests.some((r) => agentOf(r) === "translator")).toBe(false);
    const depths = runEvents(h.events)
      .filter((e) => e.run.status === "done")
      .map((e) => [e.run.agentId, e.run.depth]);
    expect(depths).toEqual([
      ["editor", 3],
      ["writer", 2],
      ["coder", 1],
      ["assistant", 0],
    ]);
  });

  it("refuses cycles, naming the chain", async () => {
    scripts.add("assistant", call("coder", "help"), echoToolResult("assistant got"));
    scripts.add("coder", call("assistant", "help me back"), echoToolResult("coder got"));
    const { runs } = await h.team.postMessage(alice, group.id, "loop");
    await h.finished(runs[0]!.id);
    const coderFinal = server.requests.filter((r) => agentOf(r) === "coder").at(-1);
    expect(lastToolResult(coderFinal)).toContain(
      "call_agent cycle refused: @assistant → @coder → @assistant (@assistant is already in the call chain)",
    );
    expect(server.requests.filter((r) => agentOf(r) === "assistant")).toHaveLength(2);
  });

  it("lists the agent ids when the target does not exist", async () => {
    scripts.add("assistant", call("ghost", "boo"), echoToolResult("got"));
    const { runs } = await h.team.postMessage(alice, group.id, "call a ghost");
    await h.finished(runs[0]!.id);
    const final = server.requests.at(-1);
    expect(lastToolResult(final)).toContain('Unknown agent "ghost"');
    expect(lastToolResult(final)).toContain("assistant, coder, writer, editor, translator");
    expect(h.sawAgentEvent(undefined, "tool_result", (e) => e.type === "tool_result" && !e.ok)).toBe(true);
  });

  it("cancels the nested run with its parent", async () => {
    let coderAsked!: () => void;
    const asked = new Promise<void>((resolve) => {
      coderAsked = resolve;
    });
    scripts.add("assistant", call("coder", "slow work"));
    scripts.add("coder", async () => {
      coderAsked();
      return { delayMs: 60_000, text: "never" };
    });
    const { runs } = await h.team.postMessage(alice, group.id, "start");
    await asked;
    expect((await h.team.cancelRun(alice, runs[0]!.id)).status).toBe("cancelled");
    const nested = await h.waitFor(
      (e) => e.type === "run" && e.run.agentId === "coder" && e.run.status === "cancelled",
    );
    expect(nested.type === "run" && nested.run.depth).toBe(1);
  });
});
