/**
 * Stopping an answer stops everything the person asked of it (issue 34, item 12): a message steered
 * into the running answer and not read yet starts no run of its own once the person stops the
 * answer (before, the stop started a new run for it). Through the team facade with the real SQLite
 * store and the scripted fake LLM.
 */
import { describe, expect, it } from "vitest";
import type { ChannelRecord } from "../../src/team/types.js";
import type { FakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { agentOf, alice, groupSuite, type TeamHarness } from "./harness.js";

let server: FakeLlmServer;
let h: TeamHarness;
let group: ChannelRecord;
const scripts = groupSuite(
  { name: "Ops", leaderAgentId: "coder", agentIds: ["coder"], userIds: [] },
  (suite) => {
    ({ server, h, group } = suite);
  },
);

describe("stopping an answer with a steered message", () => {
  it("starts no run for the message the stopped answer had not read", async () => {
    await h.team.updateChannel(alice, group.id, { queueMode: "steer" });
    scripts.add("coder", { toolCalls: [{ name: "execute_command", args: { command: "sleep 5" } }] });
    const runId = (await h.team.postMessage(alice, group.id, "@coder do the long job")).runs[0]!.id;
    await h.waitFor((e) => e.type === "agent" && e.runId === runId && e.event.type === "tool_call");
    const steered = await h.team.postMessage(alice, group.id, "@coder and then tell me about it");
    expect(steered.queued).toEqual([{ agentId: "coder", mode: "steer" }]);

    await h.team.cancelRun(alice, runId);
    expect((await h.finished(runId)).status).toBe("cancelled");

    // A message after the stop is answered by a run of its own, as usual.
    scripts.add("coder", { text: "fresh answer" });
    const next = await h.team.postMessage(alice, group.id, "@coder something new");
    const nextRun = next.runs[0]!.id;
    expect((await h.finished(nextRun)).status).toBe("done");

    const started = h.events.flatMap((e) => (e.type === "run" && e.run.status === "queued" ? [e.run] : []));
    expect(started.map((r) => r.triggerMessageId)).not.toContain(steered.message.id);
    expect(server.requests.filter((r) => agentOf(r) === "coder")).toHaveLength(2);
  });
});
