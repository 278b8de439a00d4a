/**
 * Message actions over HTTP: `POST /api/messages/:id/regenerate` answers again as a new version,
 * `PATCH /api/messages/:id` edits the caller's own last message and answers it again; both refuse
 * people outside the channel, and the edit refuses anyone but the author.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChannelMessage, ChannelRecord, PostResult } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { AgentScripts } from "../team/harness.js";
import { call, withUsers } from "./helpers.js";
import { expectJson, startTeamServer } from "./team-helpers.js";

let llm: FakeLlmServer;
const scripts = new AgentScripts();

beforeAll(async () => {
  llm = await startFakeLlmServer({ defaultTurn: scripts.turn });
});
afterAll(async () => {
  await llm.close();
});

describe("message actions over HTTP", () => {
  it("regenerates an answer and edits the last message, with access checks", async () => {
    const s = await startTeamServer({ llmUrl: llm.url });
    const { owner, users } = await withUsers(s.url, ["member", "guest"]);
    const member = users.member!;
    const outsider = users.guest!;
    const group = await expectJson<ChannelRecord>(
      await call(s.url, "/api/channels", {
        session: owner,
        body: {
          kind: "group",
          name: "Actions",
          agentIds: ["writer"],
          leaderAgentId: "writer",
          userIds: [member.userId],
        },
      }),
      201,
    );
    const list = async () =>
      expectJson<ChannelMessage[]>(
        await call(s.url, `/api/channels/${group.id}/messages`, { session: owner }),
        200,
      );
    const settle = async (count: number) => {
      for (let i = 0; i < 200 && (await list()).length < count; i++)
        await new Promise((r) => setTimeout(r, 25));
      return list();
    };

    scripts.add("writer", { text: "one" }, { text: "two" }, { text: "three" });
    const posted = await expectJson<PostResult>(
      await call(s.url, `/api/channels/${group.id}/messages`, { session: owner, body: { text: "write" } }),
      201,
    );
    const answer = (await settle(2))[1]!;
    expect(answer).toMatchObject({ text: "one", replyTo: posted.message.id });

    // Someone outside the channel may not ask again (nor learn the message exists).
    const refused = await call(s.url, `/api/messages/${answer.id}/regenerate`, {
      session: outsider,
      method: "POST",
    });
    expect(refused.status).toBe(404);
    const again = await expectJson<PostResult>(
      await call(s.url, `/api/messages/${answer.id}/regenerate`, { session: member, method: "POST" }),
      201,
    );
    expect(again.runs).toHaveLength(1);
    expect((await settle(3))[2]).toMatchObject({ text: "two", versionOf: answer.id });

    // Only the author edits; the edit is answered as a further version.
    const notMine = await call(s.url, `/api/messages/${posted.message.id}`, {
      session: member,
      method: "PATCH",
      body: { text: "hijack" },
    });
    expect(notMine.status).toBe(403);
    const empty = await call(s.url, `/api/messages/${posted.message.id}`, {
      session: owner,
      method: "PATCH",
      body: { text: "" },
    });
    expect(empty.status).toBe(400);
    const edited = await expectJson<PostResult>(
      await call(s.url, `/api/messages/${posted.message.id}`, {
        session: owner,
        method: "PATCH",
        body: { text: "write better" },
      }),
      200,
    );
    expect(edited.message).toMatchObject({ id: posted.message.id, text: "write better" });
    const final = await settle(4);
    expect(final.map((m) => [m.text, m.versionOf ?? null])).toEqual([
      ["write better", null],
      ["one", null],
      ["two", answer.id],
      ["three", answer.id],
    ]);
  });
});
