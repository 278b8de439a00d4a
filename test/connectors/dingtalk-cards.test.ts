/**
 * DingTalk interactive cards against the fake DingTalk (Stream mode, a card template): an approval
 * prompt is a card whose press comes back over the Stream connection's card callback; a forged or
 * unknown button is refused without running anything; the asker's Approve settles the card for
 * everyone (its buttons gone, the decision shown) and the run goes on.
 */
import { describe, expect, it } from "vitest";
import { NOT_OPEN } from "../../src/connectors/approval-buttons.js";
import { FakeDingTalk } from "../../src/testing/fake-dingtalk.js";
import { eventually, onCleanup, startConnector, startConnectorServer } from "./harness.js";

describe("DingTalk approval cards", () => {
  it("refuses forged presses and settles the card on the asker's Approve", async () => {
    const server = await startConnectorServer();
    const dingtalk = await FakeDingTalk.start();
    onCleanup(() => dingtalk.close());
    const created = await server.createConnector({
      type: "dingtalk",
      name: "DingTalk bot",
      agentId: "coder",
      settings: {
        clientId: dingtalk.clientId,
        baseUrl: dingtalk.url,
        mode: "stream",
        cardTemplateId: "dimsum-card.schema",
        streaming: false,
      },
      secrets: { clientSecret: dingtalk.clientSecret },
    });
    await startConnector(server, created.id);
    await dingtalk.waitUntil(() => dingtalk.openStreams > 0, "the Stream connection");
    server.llm.enqueue(
      { toolCalls: [{ name: "execute_command", args: { command: "git push origin main" } }] },
      { text: "Pushed." },
    );
    dingtalk.pushRobotMessage(
      dingtalk.robotMessage({ conversationId: "cid-1", text: "push it", senderStaffId: "staff-1" }),
    );
    await dingtalk.waitUntil(
      () => dingtalk.messages.some((m) => m.via === "card" && m.text.includes("git push origin main")),
      "the approval card",
    );
    const card = dingtalk.messages.find((m) => m.via === "card");
    const outTrackId = card?.outTrackId ?? "";
    expect(card?.target).toBe("staff-1");
    expect(card?.title).toContain("Approval needed");
    expect(
      dingtalk.buttons(card ?? { via: "card", target: "", title: "", text: "" }).map((b) => b.text),
    ).toEqual(["✅ Approve", "♾️ Always", "❌ Reject"]);

    // Not one of Dimsum's buttons: ignored. A well-formed token without a ticket: refused.
    expect(await dingtalk.pressCard({ outTrackId, userId: "staff-1", action: "rm -rf /" })).toEqual({
      response: {},
    });
    const forged = await dingtalk.pressCard({
      outTrackId,
      userId: "staff-1",
      action: `dap:a:${"A".repeat(22)}`,
    });
    expect(forged.response?.userPrivateData?.cardParamMap?.notice).toBe(`⚠️ ${NOT_OPEN}`);
    expect(forged.response?.cardData).toBeUndefined();
    const waiting = async () => {
      for (const channel of await server.team.listChannels(server.ownerActor)) {
        const runs = await server.team.listChannelRuns(server.ownerActor, channel.id);
        if (runs.some((r) => r.status === "waiting")) return true;
      }
      return false;
    };
    expect(await waiting()).toBe(true);

    const approve = dingtalk.buttons(card ?? { via: "card", target: "", title: "", text: "" })[0];
    const answer = await dingtalk.pressCard({ outTrackId, userId: "staff-1", action: approve?.action ?? "" });
    expect(answer.response?.userPrivateData?.cardParamMap?.notice).toBe("✅ Approved");
    expect(JSON.parse(answer.response?.cardData?.cardParamMap?.buttons ?? "")).toEqual([]);
    expect(card?.text).toContain("✅ Approved");
    await eventually(
      () => dingtalk.messages.some((m) => m.via === "session" && m.text.includes("Pushed.")),
      "the answer after the approval",
    );
  });
});
