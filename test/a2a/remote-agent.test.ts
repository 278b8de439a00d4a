/**
 * A Dimsum agent calls a remote A2A agent: an `@a2a-js/sdk` server (test/support/a2a-remote-agent.ts)
 * started here, configured as a2a.json says. The remote agent's streamed answer shows as a nested run
 * in the calling answer and comes back as the tool result.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseA2aConfig, type RemoteAgentConfig } from "../../src/a2a/remote-config.js";
import type { ChannelRecord } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { type RemoteA2aAgent, startRemoteA2aAgent } from "../support/a2a-remote-agent.js";
import { AgentScripts, alice, lastToolResult, TeamHarness } from "./../team/harness.js";

const REMOTE_TOKEN = "remote-secret-token-123";
let llm: FakeLlmServer;
let remote: RemoteA2aAgent;
const scripts = new AgentScripts();
let h: TeamHarness;
let group: ChannelRecord;

beforeAll(async () => {
  llm = await startFakeLlmServer({ defaultTurn: scripts.turn });
  remote = await startRemoteA2aAgent(REMOTE_TOKEN);
});
afterAll(async () => {
  await llm.close();
  await remote.close();
});

function remoteConfig(): RemoteAgentConfig[] {
  // As a2a.json gives it: the token from the environment.
  const file = JSON.stringify({
    agents: {
      "remote-helper": {
        url: remote.url,
        token: "$" + "{HELPER_TOKEN}",
        description: "Knows the other system.",
      },
    },
  });
  return parseA2aConfig(file, "a2a.json", { HELPER_TOKEN: REMOTE_TOKEN });
}

beforeEach(async () => {
  llm.reset();
  scripts.clear();
  remote.asked.length = 0;
  remote.authorizations.length = 0;
  h = new TeamHarness(llm, { remoteAgents: remoteConfig() });
  group = await h.team.createChannel(alice, {
    kind: "group",
    name: "Remote",
    leaderAgentId: "assistant",
    agentIds: ["assistant"],
    userIds: [],
  });
});
afterEach(async () => h.close());

describe("remote A2A agents", () => {
  it("an agent calls the remote agent; its streamed answer is a nested run and the tool result", async () => {
    scripts.add(
      "assistant",
      { toolCalls: [{ name: "a2a_remote_helper", args: { task: "status of order 42" } }] },
      (request) => ({ text: `The helper said: ${lastToolResult(request)}` }),
    );
    const { runs } = await h.team.postMessage(alice, group.id, "ask the helper about order 42");
    const parent = await h.finished(runs[0]!.id);
    expect(parent.status).toBe("done");

    expect(remote.asked).toEqual(["status of order 42"]);
    expect(remote.authorizations.every((a) => a === `Bearer ${REMOTE_TOKEN}`)).toBe(true);

    const nested = h.events.find(
      (e) => e.type === "run" && e.run.agentId === "a2a:remote-helper" && e.run.status === "done",
    );
    const nestedRun = nested?.type === "run" ? nested.run : undefined;
    expect(nestedRun).toMatchObject({ depth: 1, parentRunId: parent.id, channelId: group.id });
    // The remote answer streamed as the nested run's own text.
    expect(h.streamedText(nestedRun?.id ?? "")).toBe("Remote says: status of order 42");

    const messages = await h.team.listMessages(alice, group.id);
    const answer = messages.at(-1);
    expect(answer?.text).toBe("The helper said: Remote says: status of order 42");
    expect(answer?.parts.map((p) => p.type)).toEqual(["tool", "agent_run", "text"]);
    expect(answer?.parts[1]).toMatchObject({
      type: "agent_run",
      runId: nestedRun?.id,
      agentId: "a2a:remote-helper",
      status: "done",
      parts: [{ type: "text", text: "Remote says: status of order 42" }],
    });
    // The token never reached the model.
    expect(JSON.stringify(llm.requests)).not.toContain(REMOTE_TOKEN);
  });

  it("a remote agent that refuses the call is an error result the model can act on", async () => {
    await h.close();
    const broken = remoteConfig().map((r) => ({ ...r, headers: { authorization: "Bearer wrong-token" } }));
    h = new TeamHarness(llm, { remoteAgents: broken });
    group = await h.team.createChannel(alice, {
      kind: "group",
      name: "Remote",
      leaderAgentId: "assistant",
      agentIds: ["assistant"],
      userIds: [],
    });
    scripts.add(
      "assistant",
      { toolCalls: [{ name: "a2a_remote_helper", args: { task: "anything" } }] },
      (request) => ({ text: `Failed: ${lastToolResult(request)}` }),
    );
    const { runs } = await h.team.postMessage(alice, group.id, "ask the helper");
    expect((await h.finished(runs[0]!.id)).status).toBe("done");
    const answer = (await h.team.listMessages(alice, group.id)).at(-1);
    expect(answer?.text).toContain('The A2A agent "remote-helper"');
    expect(answer?.text).toContain("401");
    expect(answer?.parts[1]).toMatchObject({
      type: "agent_run",
      agentId: "a2a:remote-helper",
      status: "error",
    });
  });
});
