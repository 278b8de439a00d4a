/**
 * Answers that outlive their instance on PostgreSQL (issue 34, items 1 and 2): real `dimsum serve`
 * processes over one database and one Redis; the instance running an answer is killed with SIGKILL
 * and another takes it over once its lease ran out. The answer it finishes keeps the tool call of the
 * step before the crash; an answer whose instances die three times is given up, and kept in the chat
 * with its error, what it said and the tool calls that ran.
 */
import { describe, expect, it } from "vitest";
import type { ChannelMessage, MessagePart } from "../../src/team/types.js";
import { call, login, type Session } from "../server/helpers.js";
import { postgresAvailable } from "../support/postgres.js";
import { redisAvailable } from "../support/redis.js";
import { json, until, useServeCluster } from "./serve-cluster.js";

const PASSWORD = "cluster-resume-password";

/** The answer's parts, tool parts as `tool:<call id>:<status>`, others by type. */
function shapeOf(parts: readonly MessagePart[]): string[] {
  return parts.map((p) => (p.type === "tool" ? `tool:${p.callId}:${p.status}` : p.type));
}

describe.skipIf(!postgresAvailable || !redisAvailable)("answers resumed by another instance", () => {
  const cluster = useServeCluster({ password: PASSWORD, homePrefix: "dimsum-cluster-resume-" });
  const { start, stop, ask, settled, toolRunning } = cluster;

  /**
   * The run's one answer in the chat. An answer given up on a lost instance is posted just after its
   * run is marked failed (the instance that took the lease over posts it), so it is waited for.
   */
  async function answerOf(
    url: string,
    owner: Session,
    channelId: string,
    runId: string,
    final: (answer: ChannelMessage) => boolean = () => true,
  ) {
    const answers = await until(
      async () => {
        const messages = await json<ChannelMessage[]>(
          call(url, `/api/channels/${channelId}/messages`, { session: owner }),
        );
        const found = messages.filter((m) => m.runId === runId);
        return found.some(final) ? found : undefined;
      },
      30_000,
      "the run's answer in the chat",
    );
    expect(answers).toHaveLength(1);
    return answers[0] as ChannelMessage;
  }

  it("keeps the earlier step's tool call in an answer another instance resumed", async () => {
    cluster.llm.reset();
    cluster.llm.enqueue({
      text: "First I look.",
      toolCalls: [{ id: "call_first", name: "execute_command", args: { command: "echo step-one-ran" } }],
    });
    cluster.llm.enqueue({
      toolCalls: [{ id: "call_sleep", name: "execute_command", args: { command: "sleep 40" } }],
    });
    cluster.llm.enqueue({ text: "done on the other instance" });
    // Alone at first, so A runs the answer.
    const a = await start();
    const owner = await login(a.url, "owner", PASSWORD);
    const { channelId, runId } = await ask(a.url, owner, "two steps please");
    const b = await start();
    await toolRunning(2);
    await stop(a, "SIGKILL");
    expect((await settled(b.url, owner, runId)).status).toBe("done");
    const answer = await answerOf(b.url, owner, channelId, runId);
    expect(shapeOf(answer.parts)).toEqual([
      "text",
      "tool:call_first:ok",
      expect.stringMatching(/^tool:call_sleep:/),
      "resumed",
      "text",
    ]);
    expect((answer.parts[1] as Extract<MessagePart, { type: "tool" }>).output).toContain("step-one-ran");
  }, 180_000);

  it("keeps in the chat an answer given up after its instances died three times", async () => {
    cluster.llm.reset();
    for (let i = 1; i <= 3; i++) {
      cluster.llm.enqueue({
        text: `Attempt ${i}.`,
        toolCalls: [{ id: `call_${i}`, name: "execute_command", args: { command: `sleep 4${i}` } }],
      });
    }
    let holder = await start();
    const owner = await login(holder.url, "owner", PASSWORD);
    const { channelId, runId } = await ask(holder.url, owner, "a job that keeps killing instances");
    for (let kills = 1; kills <= 3; kills++) {
      // The holder (the only instance alive) runs the tool; the next one starts, then the holder dies
      // and the next takes the answer over once the lease runs out.
      await toolRunning(kills);
      const next = await start();
      await stop(holder, "SIGKILL");
      holder = next;
    }
    const run = await settled(holder.url, owner, runId);
    expect(run.status).toBe("error");
    expect(cluster.llm.requests).toHaveLength(3);
    const answer = await answerOf(
      holder.url,
      owner,
      channelId,
      runId,
      (m) => m.parts.at(-1)?.type === "error",
    );
    expect(shapeOf(answer.parts)).toEqual([
      "text",
      expect.stringMatching(/^tool:call_1:/),
      "text",
      expect.stringMatching(/^tool:call_2:/),
      "text",
      "tool:call_3:error",
      "error",
    ]);
    expect(answer.parts.at(-1)).toMatchObject({
      type: "error",
      message: expect.stringMatching(/runs\.maxResumes/),
    });
    expect(answer.text).toContain("Attempt 1.");
  }, 400_000);
});
