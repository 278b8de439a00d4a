/**
 * An edited flow output says who edited it (issue 34, item 9): the step's message keeps the agent's
 * tool calls, takes the edited text and an `edited` part naming the person, so the chat can mark it.
 */
import { expect, it } from "vitest";
import type { ChannelRecord } from "../../src/team/types.js";
import { alice, groupSuite, type TeamHarness } from "./harness.js";

let h: TeamHarness;
let group: ChannelRecord;
const scripts = groupSuite({ name: "Newsroom", agentIds: ["writer", "editor"], userIds: [] }, (suite) => {
  ({ h, group } = suite);
});

it("marks a flow step's edited output with the person who edited it", async () => {
  await h.team.setChain(alice, group.id, [
    { agentId: "writer", requiresApproval: true },
    { agentId: "editor", requiresApproval: false },
  ]);
  scripts.add("writer", { text: "draft v1" });
  const flow = (await h.team.postMessage(alice, group.id, "/flow a post")).flow!;
  await h.waitFor((e) => e.type === "flow" && e.flow.id === flow.id && e.flow.status === "paused");
  await h.team.flowAction(alice, flow.id, { action: "edit", stepIndex: 0, output: "draft v2" });
  await h.team.flowAction(alice, flow.id, { action: "edit", stepIndex: 0, output: "draft v3" });

  const answer = (await h.team.listMessages(alice, group.id)).find((m) => m.author.id === "writer");
  expect(answer?.text).toBe("draft v3");
  expect(answer?.editedAt).toBeTypeOf("number");
  // One mark, however often it was edited: the last editor's.
  expect(answer?.parts.filter((p) => p.type === "edited")).toEqual([
    { type: "edited", by: "alice", name: expect.any(String) },
  ]);
});
