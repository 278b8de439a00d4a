/**
 * Agents are told the web UI draws Mermaid (issue 34, item 17): every team agent's system prompt says
 * so, in the stable part (the same text on every turn, so the cached prefix is not broken).
 */
import { describe, expect, it } from "vitest";
import type { ChannelRecord } from "../../src/team/types.js";
import type { FakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { agentOf, alice, groupSuite, systemOf, type TeamHarness } from "./harness.js";

let server: FakeLlmServer;
let h: TeamHarness;
let group: ChannelRecord;
const scripts = groupSuite(
  { name: "Diagrams", leaderAgentId: "assistant", agentIds: ["assistant"], userIds: [] },
  (suite) => {
    ({ server, h, group } = suite);
  },
);

describe("the rendering note", () => {
  it("tells agents about ```mermaid blocks in the stable system prompt, the same on every turn", async () => {
    scripts.add(
      "assistant",
      { toolCalls: [{ name: "call_agent", args: { agentId: "coder", task: "sketch the modules" } }] },
      { text: "Here it is." },
    );
    scripts.add("coder", { text: "```mermaid\ngraph TD; a-->b\n```" });
    const first = await h.team.postMessage(alice, group.id, "how do the modules fit?");
    expect((await h.finished(first.runs[0]!.id)).status).toBe("done");
    scripts.add("assistant", { text: "Sure." });
    const second = await h.team.postMessage(alice, group.id, "and the database?");
    expect((await h.finished(second.runs[0]!.id)).status).toBe("done");

    const assistant = server.requests.filter((r) => agentOf(r) === "assistant");
    expect(assistant.length).toBe(3);
    for (const request of server.requests) {
      expect(systemOf(request)).toContain("```mermaid");
      expect(systemOf(request)).toMatch(/diagram/i);
    }
    // Stable: the system prompt is the same text on every turn of the chat.
    expect(new Set(assistant.map(systemOf)).size).toBe(1);
    // The called agent is told too.
    expect(systemOf(server.requests.find((r) => agentOf(r) === "coder"))).toContain("Mermaid");
  }, 60_000);
});
