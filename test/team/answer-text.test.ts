import { describe, expect, it } from "vitest";
import { textOfParts } from "../../src/team/message-parts.js";
import type { ChannelRecord, MessagePart } from "../../src/team/types.js";
import { chatReducer, emptyChat } from "../../web/src/state/chat.js";
import { alice, groupSuite, lastToolResult, type TeamHarness } from "./harness.js";

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
    ({ h, group } = suite);
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
    // The live stream, folded into parts by the web UI's reducer, is exactly what is stored: the
    // called agent's card sits after the call, with what it said.
    let chat = emptyChat(group.id);
    for (const event of h.events) chat = chatReducer(chat, { type: "event", event });
    const resolve = (parts: MessagePart[]): MessagePart[] =>
      parts.map((p) =>
        p.type === "agent_run" ? { ...p, parts: resolve(p.parts ?? chat.runs[p.runId]?.parts ?? []) } : p,
      );
    const live = resolve(chat.runs[run.id]?.parts ?? []);
    expect(live).toEqual(stored?.parts);
    expect(stored?.parts.map((p) => p.type)).toEqual(["text", "tool", "agent_run", "text"]);
    expect(textOfParts(live)).toBe(stored?.text);
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
