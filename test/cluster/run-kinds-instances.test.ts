/**
 * Flow steps and call_agent runs outlive their instance on PostgreSQL (issue 34, item 18): real
 * `dimsum serve` processes over one database and one Redis; the instance running the run is killed
 * with SIGKILL and another takes it over once its lease ran out. A flow step goes on from its
 * checkpoint there and the flow runs its next step; a call_agent run goes on inside its caller's
 * resumed call, its finished tool call not run again.
 */
import { describe, expect, it } from "vitest";
import type { ChannelMessage, FlowRecord, TeamRun } from "../../src/team/types.js";
import { call, login, type Session } from "../server/helpers.js";
import { postgresAvailable } from "../support/postgres.js";
import { redisAvailable } from "../support/redis.js";
import { json, until, useServeCluster } from "./serve-cluster.js";

const PASSWORD = "cluster-kinds-password";

describe.skipIf(!postgresAvailable || !redisAvailable)(
  "flow steps and nested runs resumed by another instance",
  () => {
    const cluster = useServeCluster({ password: PASSWORD, homePrefix: "dimsum-cluster-kinds-" });
    const { start, stop, ask, settled, toolRunning } = cluster;

    async function answerOf(url: string, owner: Session, channelId: string, runId: string) {
      const messages = await json<ChannelMessage[]>(
        call(url, `/api/channels/${channelId}/messages`, { session: owner }),
      );
      const answers = messages.filter((m) => m.runId === runId);
      expect(answers).toHaveLength(1);
      return answers[0] as ChannelMessage;
    }

    function toolResults(index: number): Array<{ tool_call_id: string; content: string }> {
      const body = cluster.llm.requests[index]?.body as {
        messages: Array<{ role: string; tool_call_id: string; content: string }>;
      };
      return body.messages.filter((m) => m.role === "tool");
    }

    it("resumes a flow step on another instance, which then runs the next step", async () => {
      cluster.llm.reset();
      cluster.llm.enqueue({
        text: "Looking.",
        toolCalls: [{ id: "call_echo", name: "execute_command", args: { command: "echo step-zero-ran" } }],
      });
      cluster.llm.enqueue({
        toolCalls: [{ id: "call_sleep", name: "execute_command", args: { command: "sleep 40" } }],
      });
      cluster.llm.enqueue({ text: "step zero done" });
      cluster.llm.enqueue({ text: "step one done" });
      // Alone at first, so A runs the step.
      const a = await start();
      const owner = await login(a.url, "owner", PASSWORD);
      const group = await json<{ id: string }>(
        call(a.url, "/api/channels", {
          session: owner,
          body: { kind: "group", name: "Chain", agentIds: ["assistant", "coder"], userIds: [] },
        }),
      );
      await json(
        call(a.url, `/api/channels/${group.id}/chain`, {
          session: owner,
          method: "PUT",
          body: {
            steps: [
              { agentId: "assistant", requiresApproval: false },
              { agentId: "coder", requiresApproval: false },
            ],
          },
        }),
      );
      const posted = await json<{ flow: FlowRecord; runs: TeamRun[] }>(
        call(a.url, `/api/channels/${group.id}/messages`, {
          session: owner,
          body: { text: "/flow build it" },
        }),
      );
      const flowId = posted.flow.id;
      const stepRun = posted.runs[0]?.id as string;
      // B starts while A runs the step: the flow stays running.
      const b = await start();
      await toolRunning(2);
      await stop(a, "SIGKILL");
      const flow = await until(
        async () => {
          const read = await json<FlowRecord>(call(b.url, `/api/flows/${flowId}`, { session: owner }));
          return read.status === "running" ? undefined : read;
        },
        90_000,
        "the flow to end",
      );
      expect(flow.status).toBe("done");
      expect(flow.steps.map((s) => [s.status, s.output])).toEqual([
        ["completed", "step zero done"],
        ["completed", "step one done"],
      ]);
      expect(flow.steps[0]?.runId).toBe(stepRun);
      expect(cluster.llm.requests).toHaveLength(4);
      const results = toolResults(2);
      expect(results.map((r) => r.tool_call_id)).toEqual(["call_echo", "call_sleep"]);
      expect(results[1]?.content).toMatch(/Interrupted by a restart/);
    }, 180_000);

    it("resumes a call_agent run on another instance inside its caller's resumed answer", async () => {
      cluster.llm.reset();
      cluster.llm.enqueue({
        toolCalls: [
          { id: "call_ask", name: "call_agent", args: { agentId: "coder", task: "count the files" } },
        ],
      });
      cluster.llm.enqueue({
        toolCalls: [{ id: "call_echo", name: "execute_command", args: { command: "echo nested-ran" } }],
      });
      cluster.llm.enqueue({
        toolCalls: [{ id: "call_sleep", name: "execute_command", args: { command: "sleep 40" } }],
      });
      cluster.llm.enqueue({ text: "coder's answer" });
      cluster.llm.enqueue({ text: "the final answer" });
      const a = await start();
      const owner = await login(a.url, "owner", PASSWORD);
      const { channelId, runId } = await ask(a.url, owner, "ask coder");
      const b = await start();
      await toolRunning(3);
      await stop(a, "SIGKILL");
      expect((await settled(b.url, owner, runId)).status).toBe("done");
      expect(cluster.llm.requests).toHaveLength(5);
      const nested = toolResults(3);
      expect(nested.map((r) => r.tool_call_id)).toEqual(["call_echo", "call_sleep"]);
      expect(nested[0]?.content).toContain("nested-ran");
      expect(nested[1]?.content).toMatch(/Interrupted by a restart/);
      expect(toolResults(4)).toEqual([
        expect.objectContaining({ tool_call_id: "call_ask", content: "coder's answer" }),
      ]);
      const runs = await json<TeamRun[]>(call(b.url, `/api/channels/${channelId}/runs`, { session: owner }));
      expect(runs.filter((r) => r.parentRunId === runId).map((r) => r.status)).toEqual(["done"]);
      const answer = await answerOf(b.url, owner, channelId, runId);
      expect(answer.text).toContain("the final answer");
    }, 180_000);
  },
);
