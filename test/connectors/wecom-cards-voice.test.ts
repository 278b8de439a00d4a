/**
 * WeCom: approval prompts as template cards whose presses come back as `template_card_event`s, and
 * voice messages taken as the text WeCom recognised in them.
 */
import { describe, expect, it } from "vitest";
import { LINK_FIRST } from "../../src/connectors/approval-buttons.js";
import {
  buildWecomText,
  buildWecomVoice,
  FakeWecom,
  randomEncodingAESKey,
} from "../../src/testing/fake-wecom.js";
import { eventually, onCleanup, startConnector, startConnectorServer } from "./harness.js";

const PUSH = { toolCalls: [{ name: "execute_command", args: { command: "git push origin main" } }] };

async function setup() {
  const server = await startConnectorServer();
  const wecom = await FakeWecom.start();
  onCleanup(() => wecom.close());
  const keys = { token: "FakeCallbackToken01", encodingAESKey: randomEncodingAESKey(), corpId: wecom.corpId };
  const created = await server.createConnector({
    type: "wecom",
    name: "WeCom app",
    agentId: "assistant",
    settings: { corpId: wecom.corpId, appAgentId: String(wecom.agentId), baseUrl: wecom.url },
    secrets: { token: keys.token, encodingAESKey: keys.encodingAESKey, corpSecret: wecom.corpSecret },
  });
  await startConnector(server, created.id);
  const post = async (request: { query: Record<string, string>; body: string }) => {
    const res = await fetch(`${server.url}${created.inboundPath}?${new URLSearchParams(request.query)}`, {
      method: "POST",
      headers: { "content-type": "text/xml" },
      body: request.body,
    });
    expect(res.status).toBe(200);
  };
  return { server, wecom, keys, created, post };
}

describe("WeCom cards and voice", () => {
  it("asks with a template card; an unlinked guest's press in a bound group is refused, a web decision settles it", async () => {
    const { server, wecom, keys, created, post } = await setup();
    await post(buildWecomText(keys, { from: "lisi", text: "hello", agentId: wecom.agentId }));
    await wecom.waitUntil(() => wecom.messages.some((m) => m.touser === "lisi"), "the first answer");
    const group = await server.team.createChannel(server.ownerActor, {
      kind: "group",
      name: "Ops room",
      leaderAgentId: "assistant",
      agentIds: ["assistant", "coder"],
      userIds: [server.owner.userId],
    });
    await server.team.updateChannel(server.ownerActor, group.id, { queueMode: "followup" });
    const bind = await server.api(`/api/connectors/${created.id}/chats/lisi`, {
      method: "PATCH",
      body: { mode: "group", channelId: group.id },
    });
    expect(bind.status).toBe(200);

    server.llm.enqueue(PUSH, { text: "Pushed." });
    await post(buildWecomText(keys, { from: "lisi", text: "@coder push it", agentId: wecom.agentId }));
    await wecom.waitUntil(() => wecom.messages.some((m) => m.msgtype === "template_card"), "the card");
    const card = wecom.messages.find((m) => m.msgtype === "template_card");
    expect(card?.touser).toBe("lisi");
    expect(card?.content).toContain("git push origin main");
    expect(wecom.buttons(card!).map((b) => b.text)).toEqual(["Approve", "Always", "Reject"]);
    const runs = await server.team.listChannelRuns(server.ownerActor, group.id);
    const run = runs.find((r) => r.status === "waiting");
    expect(run).toBeDefined();
    for (const b of wecom.buttons(card!)) expect(b.key).not.toContain(run!.id);

    const before = wecom.messages.length;
    await post(wecom.pressCard(keys, { from: "lisi", message: card!, button: "Approve" }));
    await wecom.waitUntil(() => wecom.messages.length > before, "the refusal");
    expect(wecom.messages.at(-1)).toMatchObject({
      touser: "lisi",
      msgtype: "text",
      content: `⚠️ ${LINK_FIRST}`,
    });
    expect((await server.team.getRun(server.ownerActor, run!.id)).status).toBe("waiting");
    expect(wecom.buttons(card!).length).toBe(3);

    // The owner decides on the web: the card loses its buttons and says so.
    const callId = (await server.team.getRun(server.ownerActor, run!.id)).pendingApprovals?.[0]?.callId ?? "";
    await server.team.answerApproval(server.ownerActor, run!.id, callId, { decision: "reject" });
    await wecom.waitUntil(() => card!.replacedBy !== undefined, "the settled card");
    expect(card!.replacedBy).toContain("Rejected by alice");
    expect(wecom.buttons(card!)).toEqual([]);
    await eventually(
      async () => (await server.team.getRun(server.ownerActor, run!.id)).status === "done",
      "the run's end",
    );
  });

  it("takes a voice message as WeCom's recognised text, and says when there is none", async () => {
    const { server, wecom, keys, created, post } = await setup();
    await post(
      buildWecomVoice(keys, { from: "wangwu", agentId: wecom.agentId, recognition: "明天上午十点开会" }),
    );
    await wecom.waitUntil(() => wecom.messages.some((m) => m.touser === "wangwu"), "the answer");
    const stored = await server.channelMessages(created.id, "wangwu");
    expect(stored.find((m) => m.author.type === "user")?.text).toBe("🎤 明天上午十点开会");
    const asked = JSON.stringify(server.llm.requests.at(-1)?.body);
    expect(asked).toContain("明天上午十点开会");

    await post(buildWecomVoice(keys, { from: "zhaoliu", agentId: wecom.agentId }));
    await wecom.waitUntil(() => wecom.messages.some((m) => m.touser === "zhaoliu"), "the notice");
    expect(wecom.messages.find((m) => m.touser === "zhaoliu")?.content).toContain(
      "did not take a voice message",
    );
  });
});
