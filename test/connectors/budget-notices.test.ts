/**
 * Budget notices in the messengers, over a real server and SQLite file: the owner links their
 * Telegram / Feishu account with `/link` in a private chat; when a member's budget passes its soft
 * limit the owner (an admin) is told there, naming the member, and when the owner's own budget does,
 * they read "Your … budget". Each notice is sent once; the next answers under the same budget send
 * none.
 */
import { expect, it } from "vitest";
import type { Actor, TeamRun } from "../../src/team/types.js";
import { type ConnectorServer, eventually, startConnectorServer } from "./harness.js";
import { PLATFORMS } from "./messenger-platforms.js";

async function answered(server: ConnectorServer, actor: Actor, text: string): Promise<void> {
  const channel = await server.team.createChannel(actor, {
    kind: "direct",
    name: text,
    agentIds: ["assistant"],
    userIds: [],
  });
  await server.team.postMessage(actor, channel.id, text);
  await eventually(async () => {
    const runs: TeamRun[] = await server.team.listChannelRuns(actor, channel.id);
    return runs.length > 0 && runs.every((r) => r.status === "done");
  }, "the answer");
}

for (const platform of PLATFORMS.filter((p) => p.name === "Telegram" || p.name === "Feishu")) {
  it(`tells a linked owner in ${platform.name} when a budget passes its soft limit, once`, async () => {
    const server = await startConnectorServer();
    const rig = await platform.start(server, "assistant");
    const { code } = (await (await server.api("/api/account/messenger-link", { method: "POST" })).json()) as {
      code: string;
    };
    await rig.say(rig.adminChat, "admin", `/link ${code}`);
    const posted = () => rig.posted(rig.adminChat).map((p) => p.text);
    await eventually(() => posted().some((t) => t.includes("✅ Linked to")), "the link's confirmation");

    const created = await server.api("/api/users", {
      body: { username: "mia", password: "member-password-1", role: "member" },
    });
    const mia = (await created.json()) as { id: string };
    const miaActor: Actor = { userId: mia.id, role: "member" };
    const budget = async (scopeId: string, cheaperModel: string | null) =>
      expect(
        (
          await server.api("/api/budgets", {
            body: { scope: "person", scopeId, period: "day", unit: "tokens", softLimit: 1, cheaperModel },
          })
        ).status,
      ).toBe(201);

    // Mia's budget: the owner hears of it by name (Mia has no messenger linked).
    await budget(mia.id, "openai:gpt-test-cheap");
    await answered(server, miaActor, "first");
    await eventually(
      () => posted().some((t) => t.startsWith("⚠️ mia's daily budget passed its soft limit of 1 tokens")),
      "the notice of Mia's budget",
    );
    expect(posted().find((t) => t.startsWith("⚠️ mia's"))).toContain(
      "The next answers use openai:gpt-test-cheap.",
    );
    // Past the limit already: no second notice.
    await answered(server, miaActor, "second");
    // The owner's own budget: "Your".
    await budget(server.ownerActor.userId, null);
    await answered(server, server.ownerActor, "mine");
    await eventually(
      () => posted().some((t) => t.startsWith("⚠️ Your daily budget passed its soft limit of 1 tokens")),
      "the notice of the owner's budget",
    );
    expect(posted().filter((t) => t.startsWith("⚠️"))).toHaveLength(2);
    // Nothing went to a chat nobody linked from (the guest's).
    expect(rig.posted("72").length + rig.posted("oc_p2p_guest").length).toBe(0);
  }, 60_000);
}
