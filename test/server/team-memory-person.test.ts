/**
 * Memory follows the person: what an agent saves about someone in one chat is recalled in that
 * person's other chats and groups with the agent, and never in another person's.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Actor, Team } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { startTeamServer } from "./team-helpers.js";

let llm: FakeLlmServer;
beforeAll(async () => {
  llm = await startFakeLlmServer({ defaultTurn: { text: "ok" } });
});
afterAll(async () => {
  await llm.close();
});

const owner: Actor = { userId: "owner-1", role: "owner" };
const alice: Actor = { userId: "alice", role: "member" };
const bob: Actor = { userId: "bob", role: "member" };

async function ask(team: Team, actor: Actor, channelId: string, text: string): Promise<string> {
  const before = llm.requests.length;
  const posted = await team.postMessage(actor, channelId, text);
  const runId = posted.runs[0]?.id ?? "";
  for (let i = 0; i < 400; i++) {
    const run = await team.getRun(actor, runId);
    if (run.status !== "queued" && run.status !== "running") break;
    await new Promise((r) => setTimeout(r, 20));
  }
  return JSON.stringify(llm.requests.slice(before).map((r) => r.body));
}

it("recalls a person's memory in their other chats and groups with the agent, never in another person's", async () => {
  const { team, memory } = await startTeamServer({ llmUrl: llm.url });
  await team.createAgent(owner, { id: "scribe", name: "Scribe", memory: true });
  const direct = async (actor: Actor, name: string) =>
    team.createChannel(actor, { kind: "direct", name, agentIds: ["scribe"], userIds: [] });
  const aliceFirst = await direct(alice, "alice 1");
  const aliceSecond = await direct(alice, "alice 2");
  const bobs = await direct(bob, "bob 1");
  const group = await team.createChannel(alice, {
    kind: "group",
    name: "alice and bob",
    leaderAgentId: "scribe",
    agentIds: ["scribe"],
    userIds: ["bob"],
  });

  llm.reset();
  llm.enqueue(
    { toolCalls: [{ name: "memory_write", args: { text: "Alice's cat is called Miso", type: "semantic" } }] },
    { text: "Noted." },
  );
  const saved = await ask(team, alice, aliceFirst.id, "Remember that my cat is called Miso.");
  expect(saved).toContain("Saved memory");
  const stored = await memory?.list("alice");
  expect(stored?.map((m) => m.text)).toEqual(["Alice's cat is called Miso"]);
  expect(stored?.[0]?.agentId).toBe("scribe");

  expect(await ask(team, alice, aliceSecond.id, "What is my cat called?")).toContain("Miso");
  expect(await ask(team, alice, group.id, "What is my cat called?")).toContain("Miso");
  expect(await ask(team, bob, group.id, "What is my cat called?")).not.toContain("Miso");
  expect(await ask(team, bob, bobs.id, "What is my cat called?")).not.toContain("Miso");

  // recall_search searches the person's own conversations (and channels they are in) only.
  llm.enqueue({ toolCalls: [{ name: "recall_search", args: { query: "cat" } }] }, { text: "found" });
  expect(await ask(team, alice, aliceSecond.id, "What did I tell you about my cat?")).toContain(
    "my cat is called Miso",
  );
  llm.enqueue({ toolCalls: [{ name: "recall_search", args: { query: "cat" } }] }, { text: "found" });
  const bobRecall = await ask(team, bob, bobs.id, "What did Alice say about her cat?");
  expect(bobRecall).not.toContain("my cat is called Miso");
});
