/**
 * Cards that act, for each of Telegram, Feishu, DingTalk and WeCom against their fake platforms: a
 * `/flow` in a chat bound to a group shows the flow's progress as ONE card updated in place (never a
 * message per step), whose buttons act on the flow: the chain's first step needs approval, so the
 * flow pauses on it; an unlinked guest's press of Resume is refused and the flow stays paused, the
 * linked admin's press resumes it, and the card ends showing the flow done, its buttons gone. A
 * failed step shows on the card with Retry, whose press runs it again.
 */
import { describe, expect, it } from "vitest";
import { LINK_FIRST } from "../../src/connectors/approval-buttons.js";
import type { FlowRecord } from "../../src/team/types.js";
import { type ConnectorServer, eventually, startConnectorServer } from "./harness.js";
import { PLATFORMS, type Posted, type Rig } from "./messenger-platforms.js";

async function groupWithChain(server: ConnectorServer, gated: boolean): Promise<string> {
  const owner = server.ownerActor;
  await server.team.createAgent(owner, { id: "lead", name: "Lead", emoji: "🧭" });
  const group = await server.team.createChannel(owner, {
    kind: "group",
    name: "Ops room",
    leaderAgentId: "lead",
    agentIds: ["lead", "coder"],
    userIds: [owner.userId],
  });
  await server.team.setChain(owner, group.id, [
    { agentId: "lead", requiresApproval: gated },
    { agentId: "coder", requiresApproval: false },
  ]);
  await server.team.updateChannel(owner, group.id, { queueMode: "followup" });
  return group.id;
}

async function linkAndBind(server: ConnectorServer, rig: Rig): Promise<void> {
  const res = await server.api("/api/account/messenger-link", { method: "POST" });
  const { code } = (await res.json()) as { code: string };
  await rig.say(rig.adminChat, "admin", `/link ${code}`);
  await eventually(() => rig.posted(rig.adminChat).some((p) => p.text.includes("✅ Linked")), "the link");
  await rig.say(rig.groupChat, "admin", "/bind Ops room");
  await eventually(() => rig.posted(rig.groupChat).some((p) => p.text.includes("now the group")), "the bind");
}

const flowCards = (rig: Rig): Posted[] =>
  rig.posted(rig.groupChat).filter((p) => p.text.includes("Flow") || p.text.includes("🔗"));

async function onlyFlow(server: ConnectorServer, channelId: string): Promise<FlowRecord | undefined> {
  const runs = await server.team.listChannelRuns(server.ownerActor, channelId);
  const flowId = runs.find((r) => r.flowId !== undefined)?.flowId;
  return flowId ? server.team.getFlow(server.ownerActor, flowId) : undefined;
}

describe.each(PLATFORMS)("$name: a flow's progress card", (platform) => {
  it("is one card updated in place, whose buttons only a linked person may press", async () => {
    const server = await startConnectorServer();
    const channelId = await groupWithChain(server, true);
    const rig = await platform.start(server, "assistant");
    await linkAndBind(server, rig);
    if (rig.groupChat !== rig.adminChat) {
      // The guest speaks once, so the platform knows them.
      await rig.say(rig.groupChat, "guest", "hi all");
      await eventually(
        () => rig.posted(rig.groupChat).some((p) => p.text.includes("Hello from the assistant.")),
        "the leader's answer to the guest",
      );
    }
    const before = rig.posted(rig.groupChat).length;

    await rig.say(rig.groupChat, "admin", "/flow ship the release");
    await eventually(async () => (await onlyFlow(server, channelId))?.status === "paused", "the paused flow");
    await eventually(() => flowCards(rig).some((p) => p.buttons), "the card's buttons");
    const [card] = flowCards(rig) as [Posted];
    expect(flowCards(rig)).toHaveLength(1);
    if (platform.name !== "WeCom") {
      // Updated in place as the first step ran and the flow paused on it (WeCom updates a card once).
      await eventually(() => rig.updates(card.ref) >= 1, "an update of the card");
      expect(flowCards(rig)[0]?.text).toContain("paused at step 1 of 2");
    }

    const flow = (await onlyFlow(server, channelId)) as FlowRecord;
    if (rig.groupChat !== rig.adminChat) {
      expect(await rig.press?.(rig.groupChat, card, "guest", "Resume")).toBe(LINK_FIRST);
      expect((await server.team.getFlow(server.ownerActor, flow.id)).status).toBe("paused");
    }
    expect(await rig.press?.(rig.groupChat, card, "admin", "Resume")).toBe("Resumed");
    // Resuming a step that waits for approval approves it: audited once, as the linked account.
    const audit = (await (await server.api("/api/audit?action=approval")).json()) as {
      entries: Array<{ action: string; actorId: string; target: string; after: Record<string, unknown> }>;
    };
    expect(audit.entries).toEqual([
      expect.objectContaining({
        action: "approval.decide",
        actorId: server.owner.userId,
        target: `flow:${flow.id}`,
        after: expect.objectContaining({ via: "messenger", channel: platform.name.toLowerCase() }),
      }),
    ]);
    await eventually(async () => (await onlyFlow(server, channelId))?.status === "done", "the flow done");
    await eventually(() => (flowCards(rig)[0]?.text ?? "").includes("Flow done"), "the card showing it done");
    await eventually(
      async () => (await server.connectors.outbox(rig.connectorId)).length === 0,
      "the outbox empty",
    );

    // Still one card, updated in place: the chat got the two steps' answers and nothing else new.
    const cards = flowCards(rig);
    expect(cards).toHaveLength(1);
    expect(cards[0]?.buttons).toBe(false);
    const updates = rig.updates(card.ref);
    if (platform.name === "WeCom") expect(updates).toBe(1);
    else expect(updates).toBeGreaterThanOrEqual(3);
    const fresh = rig.posted(rig.groupChat).slice(before);
    const others = fresh.filter((p) => !p.text.includes("Flow"));
    expect(others.filter((p) => p.title !== undefined).map((p) => p.title)).toEqual(["🧭 Lead", "💻 Coder"]);
    // WeCom shows no toast: the presser is told in a message.
    const notices = others.filter((p) => p.title === undefined).map((p) => p.text);
    expect(notices).toEqual(platform.name === "WeCom" ? ["✅ Resumed"] : []);
  });

  it("offers Retry on a failed step: the linked admin's press runs it again and the flow finishes", async () => {
    const server = await startConnectorServer();
    const channelId = await groupWithChain(server, false);
    const rig = await platform.start(server, "assistant");
    await linkAndBind(server, rig);

    // The first step's model call fails for good.
    server.llm.enqueue({ error: { status: 400 } });
    await rig.say(rig.groupChat, "admin", "/flow ship the release");
    await eventually(async () => (await onlyFlow(server, channelId))?.status === "error", "the failed flow");
    await eventually(() => flowCards(rig).some((p) => p.buttons), "the card's buttons");
    const [card] = flowCards(rig) as [Posted];
    if (platform.name !== "WeCom") {
      await eventually(
        () => (flowCards(rig)[0]?.text ?? "").includes("failed at step 1 of 2"),
        "the card showing the failure",
      );
    }
    expect(await rig.press?.(rig.groupChat, card, "admin", "Retry")).toBe("Retrying");
    await eventually(async () => (await onlyFlow(server, channelId))?.status === "done", "the flow done");
    await eventually(() => (flowCards(rig)[0]?.text ?? "").includes("Flow done"), "the card showing it done");
    expect(flowCards(rig)).toHaveLength(1);
  });
});
