/**
 * Approvals as a run state and messages that reach a run in progress, through the team facade with
 * the real SQLite store and the scripted fake LLM: a call that needs approval makes the run wait (no
 * model call, stored), a decision resumes it (also after a restart), "always" becomes a grant, the
 * ask-first list is per agent; steer, collect and interrupt do what the chat's queue mode says.
 */
import { describe, expect, it } from "vitest";
import type { ChannelRecord, MessagePart, TeamRun } from "../../src/team/types.js";
import type { FakeLlmServer, RecordedRequest } from "../../src/testing/fake-llm-server.js";
import {
  agentOf,
  alice,
  bob,
  groupSuite,
  lastToolResult,
  lastUserText,
  messagesOf,
  owner,
  TeamHarness,
} from "./harness.js";

let server: FakeLlmServer;
let h: TeamHarness;
let group: ChannelRecord;
const scripts = groupSuite(
  { name: "Ops", leaderAgentId: "coder", agentIds: ["coder", "writer"], userIds: ["bob"] },
  (suite) => {
    ({ server, h, group } = suite);
  },
);

const requestsOf = (agent: string) => server.requests.filter((r: RecordedRequest) => agentOf(r) === agent);

async function waiting(runId: string): Promise<TeamRun> {
  const event = await h.waitFor((e) => e.type === "run" && e.run.id === runId && e.run.status === "waiting");
  if (event.type !== "run") throw new Error("unreachable");
  return event.run;
}

async function toolPart(runId: string): Promise<Extract<MessagePart, { type: "tool" }> | undefined> {
  const messages = await h.team.listMessages(alice, group.id);
  const answer = messages.find((m) => m.runId === runId);
  return answer?.parts.find((p): p is Extract<MessagePart, { type: "tool" }> => p.type === "tool");
}

const push = { toolCalls: [{ name: "execute_command", args: { command: "git push origin main" } }] };

describe("approvals", () => {
  it("waits for approval without a model call, then runs the call and goes on in the same message", async () => {
    scripts.add("coder", push, { text: "pushed" });
    const { runs } = await h.team.postMessage(alice, group.id, "@coder push it");
    const runId = runs[0]!.id;
    await waiting(runId);
    expect(requestsOf("coder")).toHaveLength(1);
    const run = await h.team.getRun(alice, runId);
    expect(run.status).toBe("waiting");
    expect(run.pendingApprovals).toEqual([
      expect.objectContaining({ tool: "execute_command", summary: "git push origin main" }),
    ]);
    expect(run.pendingApprovals?.[0]?.reason).toMatch(/git/);
    const card = await toolPart(runId);
    expect(card).toMatchObject({
      status: "waiting",
      approval: { state: "pending", askedOf: "alice", askedOfName: "alice" },
    });

    await h.team.answerApproval(alice, runId, run.pendingApprovals![0]!.callId, { decision: "approve" });
    const done = await h.finished(runId);
    expect(done.status).toBe("done");
    const result = lastToolResult(requestsOf("coder")[1]);
    expect(result).not.toMatch(/declined|needs approval/);
    expect(result).toMatch(/exit code/);
    const answers = (await h.team.listMessages(alice, group.id)).filter((m) => m.runId === runId);
    expect(answers).toHaveLength(1);
    expect(answers[0]?.text).toContain("pushed");
    expect((await toolPart(runId))?.approval).toMatchObject({
      state: "approved",
      by: "alice",
      byName: "alice",
    });
    expect(h.events.some((e) => e.type === "approval" && e.runId === runId && e.state === "approved")).toBe(
      true,
    );
  });

  it("feeds a rejection's reason back to the model as the tool's result", async () => {
    scripts.add("coder", push, { text: "ok, not pushing" });
    const { runs } = await h.team.postMessage(alice, group.id, "@coder push it");
    const runId = runs[0]!.id;
    await waiting(runId);
    const [pending] = (await h.team.getRun(alice, runId)).pendingApprovals ?? [];
    await h.team.answerApproval(alice, runId, pending!.callId, {
      decision: "reject",
      reason: "CI is red, do not push",
    });
    expect((await h.finished(runId)).status).toBe("done");
    expect(lastToolResult(requestsOf("coder")[1])).toContain("CI is red, do not push");
  });

  it("skips the question next time after Always, for that agent in that chat, until revoked", async () => {
    scripts.add("coder", push, { text: "pushed" }, push, { text: "pushed again" });
    const first = (await h.team.postMessage(alice, group.id, "@coder push it")).runs[0]!.id;
    await waiting(first);
    const [pending] = (await h.team.getRun(alice, first)).pendingApprovals ?? [];
    await h.team.answerApproval(alice, first, pending!.callId, { decision: "approve", always: true });
    await h.finished(first);
    expect(await h.team.listApprovalGrants(alice, group.id)).toEqual([
      expect.objectContaining({ agentId: "coder", tool: "execute_command", grantedBy: "alice" }),
    ]);
    const second = (await h.team.postMessage(alice, group.id, "@coder push again")).runs[0]!.id;
    const run = await h.finished(second);
    expect(h.statuses(second)).not.toContain("waiting");
    expect(run.status).toBe("done");
    await h.team.revokeApprovalGrant(alice, group.id, "coder", "execute_command");
    expect(await h.team.listApprovalGrants(alice, group.id)).toEqual([]);
  });

  it("lets only the person it acts for (and, in a group, its owner and admins) decide", async () => {
    scripts.add("coder", push, { text: "pushed" });
    const runId = (await h.team.postMessage(bob, group.id, "@coder push it")).runs[0]!.id;
    await waiting(runId);
    const [pending] = (await h.team.getRun(alice, runId)).pendingApprovals ?? [];
    // alice created the group: she may decide for bob; a member who is neither may not.
    await expect(
      h.team.answerApproval({ userId: "carol", role: "member" }, runId, pending!.callId, {
        decision: "approve",
      }),
    ).rejects.toMatchObject({ code: "not_found" });
    await h.team.addMember(alice, group.id, { type: "user", id: "carol" });
    await expect(
      h.team.answerApproval({ userId: "carol", role: "member" }, runId, pending!.callId, {
        decision: "approve",
      }),
    ).rejects.toMatchObject({ code: "forbidden" });
    await h.team.answerApproval(alice, runId, pending!.callId, { decision: "approve" });
    expect((await h.finished(runId)).status).toBe("done");
    await expect(
      h.team.answerApproval(alice, runId, pending!.callId, { decision: "approve" }),
    ).rejects.toMatchObject({ code: "conflict" });
  });

  it("keeps waiting across a restart; approving afterwards completes the run", async () => {
    scripts.add("coder", push, { text: "pushed after the restart" });
    const runId = (await h.team.postMessage(alice, group.id, "@coder push it")).runs[0]!.id;
    await waiting(runId);
    await h.restart();
    const run = await h.team.getRun(alice, runId);
    expect(run.status).toBe("waiting");
    expect((await toolPart(runId))?.approval?.state).toBe("pending");
    await h.team.answerApproval(alice, runId, run.pendingApprovals![0]!.callId, { decision: "approve" });
    expect((await h.finished(runId)).status).toBe("done");
    expect(requestsOf("coder")).toHaveLength(2);
  });

  it("asks first for tools on the agent's ask-first list, and only for that agent", async () => {
    await h.team.updateAgent(owner, "coder", { askFirst: ["calc*"] });
    const calc = { toolCalls: [{ name: "calculator", args: { expression: "2^10" } }] };
    scripts.add("coder", calc, { text: "1024" });
    scripts.add("writer", calc, { text: "1024" });
    const coderRun = (await h.team.postMessage(alice, group.id, "@coder 2^10?")).runs[0]!.id;
    const writerRun = (await h.team.postMessage(alice, group.id, "@writer 2^10?")).runs[0]!.id;
    expect((await h.finished(writerRun)).status).toBe("done");
    expect(h.statuses(writerRun)).not.toContain("waiting");
    const pending = (await waiting(coderRun)) && (await h.team.getRun(alice, coderRun)).pendingApprovals;
    expect(pending?.[0]).toMatchObject({ tool: "calculator", reason: expect.stringContaining("ask-first") });
  });

  it("reads a message sent while the run waited when it goes on, instead of starting another run", async () => {
    scripts.add("coder", push, { text: "pushed and tagged" });
    const runId = (await h.team.postMessage(alice, group.id, "@coder push it")).runs[0]!.id;
    await waiting(runId);
    const meanwhile = await h.team.postMessage(alice, group.id, "@coder and tag it v1");
    expect(meanwhile.runs).toEqual([]);
    expect(meanwhile.queued).toEqual([{ agentId: "coder", mode: "waiting" }]);
    const [pending] = (await h.team.getRun(alice, runId)).pendingApprovals ?? [];
    await h.team.answerApproval(alice, runId, pending!.callId, { decision: "approve" });
    expect((await h.finished(runId)).status).toBe("done");
    expect(requestsOf("coder")).toHaveLength(2);
    expect(JSON.stringify(messagesOf(requestsOf("coder")[1]))).toContain("and tag it v1");
  });

  it("ends a run nobody answered within approvals.timeoutHours, with that reason", async () => {
    // A team whose runs wait 0.36 s at most, looked at every 50 ms.
    const quick = new TeamHarness(server, { approvalSweepMs: 50 }, (config) => {
      config.approvalTimeoutMs = 360;
    });
    const original = h;
    h = quick;
    scripts.add("coder", push);
    group = await h.team.createChannel(alice, {
      kind: "group",
      name: "Ops",
      leaderAgentId: "coder",
      agentIds: ["coder"],
      userIds: [],
    });
    const runId = (await h.team.postMessage(alice, group.id, "@coder push it")).runs[0]!.id;
    await waiting(runId);
    const ended = await h.finished(runId);
    expect(ended.status).toBe("error");
    expect(ended.error).toMatch(/No one answered the approval request within 360 ms/);
    expect((await toolPart(runId))?.approval?.state).toBe("expired");
    h = original;
    await quick.close();
  });

  it("ends a waiting run when it is stopped", async () => {
    scripts.add("coder", push);
    const runId = (await h.team.postMessage(alice, group.id, "@coder push it")).runs[0]!.id;
    await waiting(runId);
    const stopped = await h.team.cancelRun(alice, runId);
    expect(stopped.status).toBe("cancelled");
    expect((await toolPart(runId))?.approval?.state).toBe("expired");
  });
});

describe("messages that reach a run in progress", () => {
  const slowTool = { toolCalls: [{ name: "execute_command", args: { command: "sleep 3" } }] };

  it("steer: a message sent during a 3-second tool call reaches the next model request", async () => {
    await h.team.updateChannel(alice, group.id, { queueMode: "steer" });
    scripts.add("coder", slowTool, { text: "switching to Python" });
    const runId = (await h.team.postMessage(alice, group.id, "@coder do it in bash")).runs[0]!.id;
    await h.waitFor((e) => e.type === "agent" && e.runId === runId && e.event.type === "tool_call");
    const steer = await h.team.postMessage(alice, group.id, "@coder stop, use Python instead");
    expect(steer.runs).toEqual([]);
    expect(steer.queued).toEqual([{ agentId: "coder", mode: "steer" }]);
    expect((await h.finished(runId)).status).toBe("done");
    const requests = requestsOf("coder");
    expect(requests).toHaveLength(2);
    expect(lastUserText(requests[1])).toContain("stop, use Python instead");
    expect(h.sawAgentEvent(runId, "steered")).toBe(true);
  });

  it("collect: three messages 300 ms apart give one run and one answer", async () => {
    await h.team.updateChannel(alice, group.id, { queueMode: "collect" });
    for (const text of ["@coder first", "@coder second", "@coder third"]) {
      const posted = await h.team.postMessage(alice, group.id, text);
      expect(posted.queued).toEqual([{ agentId: "coder", mode: "collect" }]);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    const started = await h.waitFor((e) => e.type === "run" && e.run.status === "done");
    if (started.type !== "run") throw new Error("unreachable");
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(requestsOf("coder")).toHaveLength(1);
    const input = lastUserText(requestsOf("coder")[0]);
    expect(input).toContain("first");
    expect(input).toContain("third");
    const answers = (await h.team.listMessages(alice, group.id)).filter((m) => m.author.type === "agent");
    expect(answers).toHaveLength(1);
  });

  it("interrupt: stops the run in progress, keeps what it did, and answers both messages", async () => {
    await h.team.updateChannel(alice, group.id, { queueMode: "interrupt" });
    scripts.add("coder", slowTool, { text: "never reached" });
    const first = (await h.team.postMessage(alice, group.id, "@coder first task")).runs[0]!.id;
    await h.waitFor((e) => e.type === "agent" && e.runId === first && e.event.type === "tool_call");
    const second = (await h.team.postMessage(alice, group.id, "@coder actually, second task")).runs[0]!.id;
    expect((await h.finished(first)).status).toBe("cancelled");
    expect((await h.finished(second)).status).toBe("done");
    const request = requestsOf("coder").at(-1);
    const said = JSON.stringify(messagesOf(request));
    expect(said).toContain("first task");
    expect(said).toContain("second task");
  });
});
