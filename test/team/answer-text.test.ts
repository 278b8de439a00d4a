import { describe, expect, it } from "vitest";
import type { ChannelRecord } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { alice, groupSuite, lastToolResult, type TeamHarness } from "./harness.js";

let server: FakeLlmServer;
let h: TeamHarness;
let group: ChannelRecord;
const scripts = groupSuite(
  {
    name: "Answers",
    leaderAgentId: "assistant",
    agentIds: ["assistant"],
    userIds: [],
  },
  (suite) => {
    ({ server, h, group } = suite);
  },
);

describe("an agent's answer in the channel", () => {
  it("keeps what it said before a tool call, as streamed, with the final answer in its own paragraph", async () => {
    scripts.add(
      "assistant",
      {
        text: "Let me ask the coder first.",
        toolCalls: [{ name: "call_agent", args: { agentId: "coder", task: "name a prime" } }],
      },
      (request) => ({ text: `The coder says ${lastToolResult(request)}.` }),
    );
    scripts.add("coder", { text: "seven" });

    const { runs } = await h.team.postMessage(alice, group.id, "a prime, please");
    const run = await h.finished(runs[0]!.id);
    expect(run.status).toBe("done");

    const stored = (await h.team.listMessages(alice, group.id)).at(-1);
    expect(stored?.text).toBe("Let me ask the coder first.\n\nThe coder says seven.");
    // The live stream showed exactly what is stored.
    const streamed = h.events
      .filter((e) => e.type === "delta" && e.runId === run.id)
      .map((e) => (e.type === "delta" ? e.text : ""))
      .join("");
    expect(streamed).toBe(stored?.text);
  });

  it("hands only the final answer to a calling agent", async () => {
    scripts.add(
      "assistant",
      { toolCalls: [{ name: "call_agent", args: { agentId: "coder", task: "check" } }] },
      (request) => ({ text: `got: ${lastToolResult(request)}` }),
    );
    scripts.add(
      "coder",
      { text: "Checking the workspace.", toolCalls: [{ name: "current_time", args: {} }] },
      { text: "all good" },
    );
    const { runs } = await h.team.postMessage(alice, group.id, "check please");
    expect((await h.finished(runs[0]!.id)).status).toBe("done");
    expect((await h.team.listMessages(alice, group.id)).at(-1)?.text).toBe("got: all good");
  });
});
