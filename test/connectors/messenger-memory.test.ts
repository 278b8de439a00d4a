/**
 * One person, one memory: someone who linked their Feishu account to their web account with `/link`
 * tells the agent a fact in Feishu; the agent saves it, and a web chat of that account recalls it.
 * An unlinked guest asking the same agent, in a private chat or in a group chat bound to a Dimsum
 * group the linked person is in, never gets it in their run's request.
 */
import { expect, it } from "vitest";
import type { Actor, TeamRun } from "../../src/team/types.js";
import { type ConnectorServer, eventually, startConnectorServer } from "./harness.js";
import { PLATFORMS } from "./messenger-platforms.js";

const FACT = "Alice's cat is called Miso";
const feishu = PLATFORMS.find((p) => p.name === "Feishu");

/** Requests the fake LLM received while `act` ran and the runs it started ended, as one string. */
async function requestsDuring(
  server: ConnectorServer,
  act: () => Promise<void>,
  settled: () => Promise<boolean>,
): Promise<string> {
  const before = server.llm.requests.length;
  await act();
  await eventually(async () => server.llm.requests.length > before && (await settled()), "the run's end");
  return JSON.stringify(server.llm.requests.slice(before).map((r) => r.body));
}

async function idle(server: ConnectorServer, channelId: string): Promise<boolean> {
  const runs: TeamRun[] = await server.team.listChannelRuns(server.ownerActor, channelId);
  return runs.length > 0 && runs.every((r) => r.status !== "queued" && r.status !== "running");
}

it("keeps one memory for a person linked in Feishu and the web; an unlinked guest never receives it", async () => {
  if (!feishu) throw new Error("no Feishu rig");
  const server = await startConnectorServer();
  const owner: Actor = server.ownerActor;
  await server.team.createAgent(owner, { id: "scribe", name: "Scribe", emoji: "🖋️", memory: true });
  const rig = await feishu.start(server, "scribe");
  const said = (chat: string, text: string) => () => rig.posted(chat).some((p) => p.text.includes(text));

  const res = await server.api("/api/account/messenger-link", { method: "POST" });
  const { code } = (await res.json()) as { code: string };
  await rig.say(rig.adminChat, "admin", `/link ${code}`);
  await eventually(said(rig.adminChat, "✅ Linked to alice"), "the link's confirmation");

  // The fact, said in Feishu, is saved as the web account's memory.
  server.llm.enqueue(
    { toolCalls: [{ name: "memory_write", args: { text: FACT, type: "semantic" } }] },
    { text: "Noted, Miso it is." },
  );
  await rig.say(rig.adminChat, "admin", "Remember that my cat is called Miso.");
  await eventually(said(rig.adminChat, "Noted, Miso it is."), "the answer in Feishu");
  const stored = server.db.prepare("SELECT user_id, agent_id, text FROM memories").all();
  expect(stored).toEqual([{ user_id: owner.userId, agent_id: "scribe", text: FACT }]);

  // A web chat of the same account recalls it.
  const web = await server.team.createChannel(owner, {
    kind: "direct",
    name: "Web chat",
    agentIds: ["scribe"],
    userIds: [],
  });
  const inWeb = await requestsDuring(
    server,
    async () => void (await server.team.postMessage(owner, web.id, "What is my cat called?")),
    () => idle(server, web.id),
  );
  expect(inWeb).toContain(FACT);

  // An unlinked guest's private chat with the same agent: never.
  const guestChat = "oc_p2p_guest";
  const inGuestChat = await requestsDuring(
    server,
    () => rig.say(guestChat, "guest", "What is my cat called?"),
    async () => said(guestChat, "Hello from the assistant.")(),
  );
  expect(inGuestChat).not.toContain("Miso");

  // Nor in a Feishu group bound to a Dimsum group the linked person is in, when the guest asks.
  const group = await server.team.createChannel(owner, {
    kind: "group",
    name: "Pets",
    leaderAgentId: "scribe",
    agentIds: ["scribe"],
    userIds: [owner.userId],
  });
  await server.team.updateChannel(owner, group.id, { queueMode: "followup" });
  await rig.say(rig.groupChat, "admin", "/bind Pets");
  await eventually(said(rig.groupChat, 'now the group "Pets"'), "the bind");
  const inGroupAsGuest = await requestsDuring(
    server,
    () => rig.say(rig.groupChat, "guest", "What is my cat called?"),
    () => idle(server, group.id),
  );
  expect(inGroupAsGuest).not.toContain("Miso");
  // The linked person asking in the same group is recalled it: the memory is theirs, not the chat's.
  const inGroupAsAdmin = await requestsDuring(
    server,
    () => rig.say(rig.groupChat, "admin", "What is my cat called?"),
    async () => (await server.team.listChannelRuns(owner, group.id)).length >= 2 && idle(server, group.id),
  );
  expect(inGroupAsAdmin).toContain(FACT);
});
