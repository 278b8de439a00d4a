/**
 * The names of a chat's people for everyone in it (issue 34, item 7): `GET /api/channels/:id/people`
 * gives a member (who may not list accounts) the id and username of each person in a group they
 * belong to, nothing more, and nothing of a group they are not in.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { ChannelRecord } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { call, withUsers } from "./helpers.js";
import { expectJson, startTeamServer } from "./team-helpers.js";

let llm: FakeLlmServer;
beforeAll(async () => {
  llm = await startFakeLlmServer({});
});
afterAll(async () => llm.close());

it("lists the group's people by name for a member, and nothing for an outsider", async () => {
  const s = await startTeamServer({ llmUrl: llm.url });
  const { owner, users } = await withUsers(s.url, ["member", "guest"]);
  const member = users.member!;
  const group = await expectJson<ChannelRecord>(
    await call(s.url, "/api/channels", {
      session: owner,
      body: { kind: "group", name: "Kitchen", agentIds: ["assistant"], userIds: [member.userId] },
    }),
    201,
  );
  // A member may not list accounts…
  expect((await call(s.url, "/api/users", { session: member })).status).toBe(403);
  // …but sees who is in the group with them, by name.
  const people = await expectJson<Array<{ id: string; username: string }>>(
    await call(s.url, `/api/channels/${group.id}/people`, { session: member }),
    200,
  );
  expect(people.sort((a, b) => a.username.localeCompare(b.username))).toEqual([
    { id: owner.userId, username: "alice" },
    { id: member.userId, username: "member-user" },
  ]);
  // Someone outside the group learns nothing of it.
  expect((await call(s.url, `/api/channels/${group.id}/people`, { session: users.guest! })).status).toBe(404);
  expect((await call(s.url, `/api/channels/${group.id}/people`)).status).toBe(401);
});
