import { afterAll, beforeAll, expect, it } from "vitest";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { startTeamServer } from "./team-helpers.js";

let llm: FakeLlmServer;
beforeAll(async () => {
  llm = await startFakeLlmServer({ defaultTurn: { text: "ok" } });
});
afterAll(async () => {
  await llm.close();
});

it("gives team agents their named skills, and memory only when the agent has memory on", async () => {
  const { team, memory } = await startTeamServer({ llmUrl: llm.url });
  const owner = { userId: "owner-1", role: "owner" as const };
  await team.createAgent(owner, {
    id: "scribe",
    name: "Scribe",
    memory: true,
    skills: ["commit-message"],
    soul: "You write.",
  });
  await team.createAgent(owner, { id: "forgetful", name: "Forgetful", memory: false });
  const channel = await team.createChannel(owner, {
    kind: "group",
    name: "docs",
    agentIds: ["scribe", "forgetful"],
    userIds: [],
  });
  await memory?.remember({
    userId: owner.userId,
    agentId: "scribe",
    text: "This team always uses British spelling.",
    type: "procedural",
  });
  await memory?.remember({
    userId: owner.userId,
    agentId: "forgetful",
    text: "This team always uses British spelling.",
    type: "procedural",
  });

  const waitForAnswer = async (agentId: string) => {
    for (let i = 0; i < 200; i++) {
      const messages = await team.listMessages(owner, channel.id);
      if (messages.some((m) => m.author.type === "agent" && m.author.id === agentId)) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`no answer from ${agentId}`);
  };

  llm.reset();
  await team.postMessage(owner, channel.id, "@scribe which spelling should the release notes use?");
  await waitForAnswer("scribe");
  const scribeRequest = JSON.stringify(llm.requests.at(-1)?.body);
  expect(scribeRequest).toContain("British spelling");
  expect(scribeRequest).toContain("Skill: commit-message");

  llm.reset();
  await team.postMessage(owner, channel.id, "@forgetful which spelling should the release notes use?");
  await waitForAnswer("forgetful");
  const forgetfulRequest = JSON.stringify(llm.requests.at(-1)?.body);
  expect(forgetfulRequest).not.toContain("British spelling");
});
