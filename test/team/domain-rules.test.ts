import { describe, expect, it } from "vitest";
import {
  applyAction,
  beginFlow,
  completeStep,
  createFlow,
  failStep,
  markStepRunning,
  suspendFlow,
} from "../../src/team/flows.js";
import { parseMentions } from "../../src/team/mentions.js";
import { searchDocument, searchExpression } from "../../src/team/search-text.js";

const agents = [
  { id: "coder", name: "Coder" },
  { id: "writer", name: "Writer" },
  { id: "fanyi", name: "翻译" },
  { id: "code-review", name: "Code Reviewer" },
];
const users = [{ id: "alice" }];

describe("parseMentions", () => {
  it("matches ids and names case-insensitively, in order, once each", () => {
    expect(parseMentions("@WRITER then @coder, and @writer again", agents).agentIds).toEqual([
      "writer",
      "coder",
    ]);
    expect(parseMentions("(@Coder) @CodeReviewer @翻译 please", agents).agentIds).toEqual([
      "coder",
      "code-review",
      "fanyi",
    ]);
    expect(parseMentions("@code-review.", agents).agentIds).toEqual(["code-review"]);
  });

  it("ignores emails, code, unknown names and people", () => {
    const parsed = parseMentions(
      "mail ops@coder.dev, run `@writer`, ```\n@coder\n``` @nobody @alice",
      agents,
      users,
    );
    expect(parsed).toEqual({ all: false, chain: false, agentIds: [], userIds: ["alice"] });
  });

  it("recognises @all and @chain", () => {
    expect(parseMentions("@ALL standup", agents)).toMatchObject({ all: true, chain: false });
    expect(parseMentions("@chain go", agents)).toMatchObject({ chain: true, agentIds: [] });
  });
});

describe("search text", () => {
  it("indexes CJK runs as characters and bigrams and queries by bigrams", () => {
    expect(searchDocument("讨论数据库 Deployment!")).toBe("讨 论 数 据 库 讨论 论数 数据 据库 deployment");
    expect(searchExpression("数据库 deploy")).toBe('"数据" AND "据库" AND "deploy"*');
    expect(searchExpression("库")).toBe('"库"');
    expect(searchExpression(' "" * ')).toBeUndefined();
  });
});

describe("flow state machine", () => {
  const chain = [
    { agentId: "writer", requiresApproval: false },
    { agentId: "editor", requiresApproval: true },
  ];
  const started = () => beginFlow(createFlow("f1", "c1", 1, chain, "task", 0), 1).flow;

  it("pauses after a step that needs approval and finishes after the last step", () => {
    const toStep1 = completeStep(markStepRunning(started(), 0, "r0", 2), 0, "out0", 2);
    expect(toStep1).toMatchObject({ start: 1, flow: { status: "running", currentStep: 1 } });
    const running1 = markStepRunning(toStep1.flow, 1, "r1", 3);
    expect(running1.steps[1]).toMatchObject({ status: "running", input: "out0", runId: "r1" });
    const paused = completeStep(running1, 1, "out1", 3).flow;
    expect(paused.status).toBe("paused");
    // Resume does not pass a step waiting for approval: only Approve does.
    expect(() => applyAction(paused, { action: "resume" }, 4)).toThrow(/Step 2 waits for approval/);
    const done = applyAction(paused, { action: "approve", stepIndex: 1 }, 4);
    expect(done.flow.status).toBe("done");
    expect(done.start).toBeUndefined();
  });

  it("refuses actions the state does not allow", () => {
    expect(() => applyAction(started(), { action: "resume" }, 2)).toThrow(
      /Cannot resume a flow that is running/,
    );
    const failed = failStep(started(), 0, "boom", 2).flow;
    expect(() => applyAction(failed, { action: "resume" }, 3)).toThrow(/Cannot resume a flow that is error/);
    expect(() => applyAction(failed, { action: "edit", stepIndex: 0, output: "x" }, 3)).toThrow(
      /only a finished step/,
    );
    expect(applyAction(failed, { action: "retry", stepIndex: 0 }, 3)).toMatchObject({ start: 0 });
  });

  it("suspends a running flow for a restart", () => {
    const suspended = suspendFlow(markStepRunning(started(), 0, "r0", 2), 5);
    expect(suspended.status).toBe("paused");
    expect(suspended.steps.map((s) => s.status)).toEqual(["waiting", "waiting"]);
    expect(applyAction(suspended, { action: "resume" }, 6)).toMatchObject({
      start: 0,
      flow: { status: "running" },
    });
  });
});
