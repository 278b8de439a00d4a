import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { defineTool } from "../../src/tools/types.js";
import { AgentScripts, alice, owner, TeamHarness } from "./harness.js";

let server: FakeLlmServer;
const scripts = new AgentScripts();
let h: TeamHarness | undefined;

beforeAll(async () => {
  server = await startFakeLlmServer({ defaultTurn: scripts.turn });
});
afterAll(async () => {
  await server.close();
});
afterEach(async () => {
  await h?.close();
});

it("offers a granted tool only to agents whose allow list names it, acting for the requester", async () => {
  const seen: string[] = [];
  const standIn = (requestedBy: string) =>
    defineTool({
      name: "manage_schedule",
      description: "test stand-in",
      parameters: z.object({}),
      execute: async () => {
        seen.push(requestedBy);
        return "scheduled";
      },
    });
  h = new TeamHarness(server, {
    grantableTools: {
      names: ["manage_schedule"],
      describe: () => [standIn("")],
      create: (_agent, requestedBy) => [standIn(requestedBy)],
    },
  });
  await h.team.createAgent(owner, {
    id: "planner",
    name: "Planner",
    toolsAllow: ["manage_schedule", "calculator"],
  });
  await h.team.createAgent(owner, { id: "helper", name: "Helper" });
  const channel = await h.team.createChannel(alice, {
    kind: "group",
    name: "ops",
    agentIds: ["planner", "helper"],
    userIds: [],
  });
  scripts.add("planner", { toolCalls: [{ name: "manage_schedule", args: {} }] }, { text: "done" });
  const planned = await h.team.postMessage(alice, channel.id, "@planner schedule the standup");
  await h.finished(planned.runs[0]?.id ?? "");
  const plannerTools = JSON.stringify((server.requests[0]?.body as { tools?: unknown } | undefined)?.tools);
  expect(plannerTools).toContain("manage_schedule");
  expect(seen).toEqual(["alice"]);

  server.reset();
  const helped = await h.team.postMessage(alice, channel.id, "@helper hello");
  await h.finished(helped.runs[0]?.id ?? "");
  expect(JSON.stringify((server.requests[0]?.body as { tools?: unknown } | undefined)?.tools)).not.toContain(
    "manage_schedule",
  );
});
