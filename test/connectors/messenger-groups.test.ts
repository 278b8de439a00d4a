/**
 * The team in the messenger, for each of Telegram, Feishu, DingTalk and WeCom against their fake
 * platforms: a person links their messenger account to the owner's web account with `/link <code>`,
 * binds the chat to a Dimsum group of three agents with `/bind`, and the group answers as on the web:
 * `@coder` by coder alone, `@all` by all three, no mention by the leader, `@写手` by name in any
 * script, `/flow` through the chain; each answer labelled with who speaks. A shell call that needs
 * approval asks in the chat; an unlinked guest's press is refused, the linked admin's resumes the run.
 */
import { describe, expect, it } from "vitest";
import { LINK_FIRST } from "../../src/connectors/approval-buttons.js";
import type { ChannelRecord, TeamRun } from "../../src/team/types.js";
import { type ConnectorServer, eventually, startConnectorServer } from "./harness.js";
import { PLATFORMS, type Posted, type Rig } from "./messenger-platforms.js";

const PUSH = { toolCalls: [{ name: "execute_command", args: { command: "git push origin main" } }] };

async function teamOfThree(server: ConnectorServer): Promise<ChannelRecord> {
  const owner = server.ownerActor;
  await server.team.createAgent(owner, { id: "lead", name: "Lead", emoji: "🧭" });
  // `coder` is a starter agent (💻 Coder).
  await server.team.createAgent(owner, { id: "scribe", name: "写手", emoji: "🖋️" });
  const group = await server.team.createChannel(owner, {
    kind: "group",
    name: "Ops room",
    leaderAgentId: "lead",
    agentIds: ["lead", "coder", "scribe"],
    userIds: [owner.userId],
  });
  await server.team.setChain(owner, group.id, [
    { agentId: "lead", requiresApproval: false },
    { agentId: "coder", requiresApproval: false },
  ]);
  // Answered at once (a group collects a burst for 1.5 s by default).
  return server.team.updateChannel(owner, group.id, { queueMode: "followup" });
}

/** Waits until the chat has `count` more labelled answers than `before` and every run has ended. */
async function answers(
  server: ConnectorServer,
  rig: Rig,
  channelId: string,
  before: number,
  count: number,
): Promise<Posted[]> {
  const labelled = () =>
    rig
      .posted(rig.groupChat)
      // Answers only: not a web message mirrored, nor a flow's progress card.
      .filter((p) => p.title !== undefined && !p.title.startsWith("💬") && !p.title.includes("Flow"));
  await eventually(() => labelled().length >= before + count, `${count} labelled answers`);
  await eventually(async () => {
    const runs: TeamRun[] = await server.team.listChannelRuns(server.ownerActor, channelId);
    const open = runs.some((r) => r.status === "queued" || r.status === "running");
    return !open && (await server.connectors.outbox(rig.connectorId)).length === 0;
  }, "every run ended and the outbox empty");
  return labelled().slice(before);
}

async function linkCode(server: ConnectorServer): Promise<string> {
  const res = await server.api("/api/account/messenger-link", { method: "POST" });
  expect(res.status).toBe(201);
  const body = (await res.json()) as { code: string; command: string };
  expect(body.command).toBe(`/link ${body.code}`);
  return body.code;
}

describe.each(PLATFORMS)("$name: a chat bound to a group of three agents", (platform) => {
  it("links, binds, routes by mention, runs the chain and labels who speaks", async () => {
    const server = await startConnectorServer();
    const group = await teamOfThree(server);
    const rig = await platform.start(server, "assistant");
    const said = (chat: string, text: string) => () => rig.posted(chat).some((p) => p.text.includes(text));

    // A guest cannot bind; a wrong code links nobody.
    await rig.say(rig.adminChat, "admin", "/bind Ops room");
    await eventually(said(rig.adminChat, "Only linked members can bind"), "the refusal to a guest");
    await rig.say(rig.adminChat, "admin", "/link 000000x");
    await eventually(said(rig.adminChat, "wrong or expired"), "the wrong code's answer");

    await rig.say(rig.adminChat, "admin", `/link ${await linkCode(server)}`);
    await eventually(said(rig.adminChat, "✅ Linked to alice"), "the link's confirmation");

    await rig.say(rig.groupChat, "admin", "/bind ops ROOM");
    await eventually(said(rig.groupChat, 'now the group "Ops room"'), "the bind's confirmation");
    const agentsReply = rig.posted(rig.groupChat).find((p) => p.text.includes("now the group"));
    expect(agentsReply?.text).toContain("🧭 Lead (@lead) — leader");
    expect(agentsReply?.text).toContain("Chain (/flow): @lead → @coder");

    let seen = 0;
    await rig.say(rig.groupChat, "admin", "@coder fix the build");
    let got = await answers(server, rig, group.id, seen, 1);
    expect(got.map((p) => p.title)).toEqual(["💻 Coder"]);
    expect(got[0]?.text).toContain("Hello from the assistant.");
    seen += got.length;

    await rig.say(rig.groupChat, "admin", "@all status please");
    got = await answers(server, rig, group.id, seen, 3);
    expect(got.map((p) => p.title).sort()).toEqual(["🖋️ 写手", "💻 Coder", "🧭 Lead"].sort());
    seen += got.length;

    await rig.say(rig.groupChat, "admin", "what is next?");
    got = await answers(server, rig, group.id, seen, 1);
    expect(got.map((p) => p.title)).toEqual(["🧭 Lead"]);
    seen += got.length;

    await rig.say(rig.groupChat, "admin", "@写手 一段说明");
    got = await answers(server, rig, group.id, seen, 1);
    expect(got.map((p) => p.title)).toEqual(["🖋️ 写手"]);
    seen += got.length;

    await rig.say(rig.groupChat, "admin", "/flow ship the release");
    got = await answers(server, rig, group.id, seen, 2);
    expect(got.map((p) => p.title)).toEqual(["🧭 Lead", "💻 Coder"]);
    seen += got.length;

    // The linked person's messages are the owner's own in the web group.
    const messages = await server.team.listMessages(server.ownerActor, group.id);
    const mine = messages.filter((m) => m.author.type === "user");
    expect(mine.length).toBeGreaterThanOrEqual(5);
    expect(mine.every((m) => m.author.id === server.owner.userId)).toBe(true);
  });

  it("asks approval in the chat: an unlinked guest's press is refused, the linked admin's resumes", async () => {
    const server = await startConnectorServer();
    const group = await teamOfThree(server);
    const rig = await platform.start(server, "assistant");
    await rig.say(rig.adminChat, "admin", `/link ${await linkCode(server)}`);
    await eventually(() => rig.posted(rig.adminChat).some((p) => p.text.includes("✅ Linked")), "the link");
    await rig.say(rig.groupChat, "admin", "/bind Ops room");
    await eventually(
      () => rig.posted(rig.groupChat).some((p) => p.text.includes("now the group")),
      "the bind",
    );
    if (rig.groupChat !== rig.adminChat) {
      // The guest speaks once (answered by the leader), so the platform knows them.
      await rig.say(rig.groupChat, "guest", "hi all");
      await answers(server, rig, group.id, 0, 1);
    }

    server.llm.enqueue(PUSH, { text: "Pushed to main." });
    await rig.say(rig.groupChat, "admin", "@coder push it");
    await eventually(
      () => rig.posted(rig.groupChat).some((p) => p.text.includes("git push origin main")),
      "the approval prompt",
    );
    const prompt = rig.posted(rig.groupChat).find((p) => p.text.includes("git push origin main")) as Posted;
    const waiting = async () =>
      (await server.team.listChannelRuns(server.ownerActor, group.id)).find((r) => r.status === "waiting");
    await eventually(async () => (await waiting()) !== undefined, "the waiting run");
    const run = (await waiting()) as TeamRun;
    if (!rig.press) {
      // No buttons on this platform yet: the prompt is text, decided in the web UI.
      expect(prompt.buttons).toBe(false);
      return;
    }
    expect(prompt.buttons).toBe(true);
    if (rig.groupChat !== rig.adminChat) {
      expect(await rig.press(rig.groupChat, prompt, "guest", "Approve")).toBe(LINK_FIRST);
      expect((await server.team.getRun(server.ownerActor, run.id)).status).toBe("waiting");
    }
    expect(await rig.press(rig.groupChat, prompt, "admin", "Approve")).toMatch(/Approved/);
    // Audited once, as the linked account, with the platform it was decided on (the refused press: never).
    const audit = (await (await server.api("/api/audit?action=approval")).json()) as {
      entries: Array<{ action: string; actorId: string; target: string; after: Record<string, unknown> }>;
    };
    expect(audit.entries).toEqual([
      expect.objectContaining({
        action: "approval.decide",
        actorId: server.owner.userId,
        target: expect.stringMatching(new RegExp(`^${run.id}/call_`)),
        after: expect.objectContaining({
          decision: "approve",
          tool: "execute_command",
          via: "messenger",
          channel: platform.name.toLowerCase(),
          connectorId: rig.connectorId,
        }),
      }),
    ]);
    await eventually(
      () =>
        rig.posted(rig.groupChat).some((p) => p.title === "💻 Coder" && p.text.includes("Pushed to main.")),
      "the answer after the approval",
    );
    expect((await server.team.getRun(server.ownerActor, run.id)).status).toBe("done");
  });
});
