/**
 * An agent's sandbox network in team runs, with the real sandbox, the real npm registry and the
 * scripted fake LLM: an agent allowed registry.npmjs.org reaches it, another (off) does not; an
 * agent asks with request_network, the run waits for "<agent> wants network access to <hosts>",
 * approved the command reaches the host (that run only), rejected the model reads it was declined.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { TeamRun } from "../../src/team/types.js";
import {
  type FakeLlmServer,
  type RecordedRequest,
  startFakeLlmServer,
} from "../../src/testing/fake-llm-server.js";
import { isAddressAllowed, systemLookup } from "../../src/tools/builtin/network-guard.js";
import { detectSandbox } from "../../src/tools/builtin/sandbox/detect.js";
import { AgentScripts, agentOf, alice, lastToolResult, owner, TeamHarness } from "./harness.js";

const sandboxed = (await detectSandbox("/usr/bin/bwrap")).available;
// Where the registry is reached through a mirror on a reserved address, the operator allows private
// ones (as test/tools/builtin/sandbox-network.test.ts does).
const registryIsPublic = (await systemLookup("registry.npmjs.org").catch(() => [])).every(
  (a) => isAddressAllowed(a.address).allowed,
);

// A cache of its own per command: npm answers from a stale cache when the registry is unreachable.
const npmView = (cache: string) => ({
  toolCalls: [
    {
      name: "execute_command",
      args: { command: `npm view ms version --cache ./.npm-${cache} --fetch-retries=0` },
    },
  ],
});
const askNetwork = {
  toolCalls: [{ name: "request_network", args: { hosts: ["registry.npmjs.org"], reason: "to install ms" } }],
};

let server: FakeLlmServer;
let h: TeamHarness;
let groupId: string;
const scripts = new AgentScripts();
beforeAll(async () => {
  server = await startFakeLlmServer({ defaultTurn: scripts.turn });
});
afterAll(async () => {
  await server?.close();
});
beforeEach(async () => {
  server.reset();
  scripts.clear();
  h = new TeamHarness(server, {}, (config) => {
    config.tools.fetch.allowPrivateNetwork = !registryIsPublic;
  });
  const group = await h.team.createChannel(alice, {
    kind: "group",
    name: "Build",
    leaderAgentId: "coder",
    agentIds: ["coder"],
    userIds: [],
  });
  groupId = group.id;
});
afterEach(async () => {
  await h?.close();
});

const requestsOf = (agent: string) => server.requests.filter((r: RecordedRequest) => agentOf(r) === agent);

async function waiting(runId: string): Promise<TeamRun> {
  const event = await h.waitFor((e) => e.type === "run" && e.run.id === runId && e.run.status === "waiting");
  if (event.type !== "run") throw new Error("unreachable");
  return event.run;
}

describe.skipIf(!sandboxed)("an agent's network in team runs", () => {
  it("an agent allowed registry.npmjs.org reaches it; another agent (off) does not", async () => {
    await h.team.updateAgent(owner, "coder", { network: { mode: "allow", hosts: ["registry.npmjs.org"] } });
    await h.team.createAgent(owner, { id: "builder", name: "Builder", network: { mode: "off" } });
    await h.team.addMember(alice, groupId, { type: "agent", id: "builder" });
    scripts.add("coder", npmView("coder"), { text: "done" });
    scripts.add("builder", npmView("builder"), { text: "done" });

    const coder = (await h.team.postMessage(alice, groupId, "@coder check ms")).runs[0]!.id;
    expect((await h.finished(coder)).status).toBe("done");
    expect(lastToolResult(requestsOf("coder")[1])).toMatch(/exit code 0\n\[stdout\]\n\d+\.\d+\.\d+/);

    const builder = (await h.team.postMessage(alice, groupId, "@builder check ms")).runs[0]!.id;
    expect((await h.finished(builder)).status).toBe("done");
    const refused = lastToolResult(requestsOf("builder")[1]);
    expect(refused).not.toMatch(/exit code 0\n/);
    expect(refused).toMatch(/exit code \d+/);
  }, 120_000);

  it("request_network approved: the run waits, then its command reaches the host (that run only)", async () => {
    scripts.add("coder", askNetwork, npmView("granted"), { text: "got it" });
    const runId = (await h.team.postMessage(alice, groupId, "@coder check ms")).runs[0]!.id;
    await waiting(runId);
    const run = await h.team.getRun(alice, runId);
    expect(run.pendingApprovals).toEqual([
      expect.objectContaining({
        tool: "request_network",
        summary: "Coder wants network access to registry.npmjs.org",
        reason: "to install ms",
      }),
    ]);
    // "Always" is taken as once: a grant of network is for this run only.
    await h.team.answerApproval(alice, runId, run.pendingApprovals![0]!.callId, {
      decision: "approve",
      always: true,
    });
    expect((await h.finished(runId)).status).toBe("done");
    const coder = requestsOf("coder");
    expect(lastToolResult(coder[1])).toMatch(/allowed for the rest of this run/);
    expect(lastToolResult(coder[2])).toMatch(/exit code 0\n\[stdout\]\n\d+\.\d+\.\d+/);
    expect(await h.team.listApprovalGrants(alice, groupId)).toEqual([]);

    // The next run starts without the grant again.
    scripts.add("coder", npmView("next"), { text: "no network" });
    const next = (await h.team.postMessage(alice, groupId, "@coder again")).runs[0]!.id;
    expect((await h.finished(next)).status).toBe("done");
    expect(lastToolResult(requestsOf("coder").at(-1))).not.toMatch(/exit code 0\n/);
  }, 120_000);

  it("request_network rejected: the model reads that the user declined", async () => {
    scripts.add("coder", askNetwork, { text: "ok" });
    const runId = (await h.team.postMessage(alice, groupId, "@coder check ms")).runs[0]!.id;
    await waiting(runId);
    const [pending] = (await h.team.getRun(alice, runId)).pendingApprovals ?? [];
    await h.team.answerApproval(alice, runId, pending!.callId, { decision: "reject", reason: "not today" });
    expect((await h.finished(runId)).status).toBe("done");
    const result = lastToolResult(requestsOf("coder")[1]);
    expect(result).toMatch(/declined to run request_network/);
    expect(result).toContain("not today");
  }, 60_000);
});
