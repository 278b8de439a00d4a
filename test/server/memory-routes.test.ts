/**
 * `/api/memory` over a real server and SQLite file: a person lists, searches, edits and forgets their
 * own archival memories and core blocks; admins may do so for anyone (`?userId=`); members never
 * reach another person's.
 */
import { describe, expect, it } from "vitest";
import type { CoreBlock, MemoryRecord } from "../../src/memory/types.js";
import { call, withUsers } from "./helpers.js";
import { expectJson, startTeamServer } from "./team-helpers.js";

async function world() {
  const s = await startTeamServer();
  const { owner, users } = await withUsers(s.url, ["admin", "member"]);
  const member = users.member!;
  const admin = users.admin!;
  const memory = s.memory!;
  await memory.remember({
    userId: member.userId,
    agentId: "scribe",
    text: "Likes oolong tea",
    type: "semantic",
  });
  await memory.remember({ userId: member.userId, text: "Works in Lisbon", type: "semantic" });
  await memory.remember({ userId: owner.userId, text: "The owner's secret plan", type: "semantic" });
  await memory.setCoreBlock({ userId: member.userId, agentId: "scribe" }, "human", "Name: Mia");
  return { s, owner, admin, member, memory };
}

describe("/api/memory", () => {
  it("lets a member list, search, edit and forget their own memories", async () => {
    const { s, member } = await world();
    const mine = await expectJson<MemoryRecord[]>(await call(s.url, "/api/memory", { session: member }), 200);
    expect(mine.map((m) => m.text).sort()).toEqual(["Likes oolong tea", "Works in Lisbon"]);
    expect(mine.find((m) => m.text === "Likes oolong tea")?.agentId).toBe("scribe");

    const found = await expectJson<MemoryRecord[]>(
      await call(s.url, "/api/memory?q=tea", { session: member }),
      200,
    );
    expect(found.map((m) => m.text)).toEqual(["Likes oolong tea"]);

    const tea = found[0]!;
    const edited = await expectJson<MemoryRecord>(
      await call(s.url, `/api/memory/${tea.id}`, {
        session: member,
        method: "PATCH",
        body: { text: "Likes green tea, not coffee", importance: 8 },
      }),
      200,
    );
    expect(edited).toMatchObject({ id: tea.id, text: "Likes green tea, not coffee", importance: 8 });
    // The new text is what search finds now.
    const green = await expectJson<MemoryRecord[]>(
      await call(s.url, "/api/memory?q=coffee", { session: member }),
      200,
    );
    expect(green.map((m) => m.id)).toEqual([tea.id]);
    const oolong = await expectJson<MemoryRecord[]>(
      await call(s.url, "/api/memory?q=oolong", { session: member }),
      200,
    );
    expect(oolong).toEqual([]);

    const empty = await call(s.url, `/api/memory/${tea.id}`, { session: member, method: "PATCH", body: {} });
    expect(empty.status).toBe(400);

    expect((await call(s.url, `/api/memory/${tea.id}`, { session: member, method: "DELETE" })).status).toBe(
      204,
    );
    const left = await expectJson<MemoryRecord[]>(await call(s.url, "/api/memory", { session: member }), 200);
    expect(left.map((m) => m.text)).toEqual(["Works in Lisbon"]);
  });

  it("lets a member read, set and delete their core blocks", async () => {
    const { s, member } = await world();
    const blocks = await expectJson<CoreBlock[]>(
      await call(s.url, "/api/memory/core", { session: member }),
      200,
    );
    expect(blocks).toMatchObject([{ label: "human", value: "Name: Mia", agentId: "scribe" }]);

    const set = await expectJson<CoreBlock>(
      await call(s.url, "/api/memory/core/human?agentId=scribe", {
        session: member,
        method: "PUT",
        body: { value: "Name: Mia\nPrefers short answers" },
      }),
      200,
    );
    expect(set).toMatchObject({
      label: "human",
      agentId: "scribe",
      value: "Name: Mia\nPrefers short answers",
    });

    const bad = await call(s.url, "/api/memory/core/Not%20a%20label", {
      session: member,
      method: "PUT",
      body: { value: "x" },
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain(
      "not a valid block label",
    );

    expect(
      (await call(s.url, "/api/memory/core/human?agentId=scribe", { session: member, method: "DELETE" }))
        .status,
    ).toBe(204);
    expect(
      await expectJson<CoreBlock[]>(await call(s.url, "/api/memory/core", { session: member }), 200),
    ).toEqual([]);
    expect(
      (await call(s.url, "/api/memory/core/human?agentId=scribe", { session: member, method: "DELETE" }))
        .status,
    ).toBe(404);
  });

  it("keeps members out of other people's memories and lets admins manage anyone's", async () => {
    const { s, owner, admin, member, memory } = await world();
    const ownerMemory = (await memory.list(owner.userId))[0]!;
    const memberMemories = await memory.list(member.userId);
    const lisbon = memberMemories.find((m) => m.text === "Works in Lisbon")!;

    // A member can neither name another person nor reach their memory by id.
    expect((await call(s.url, `/api/memory?userId=${owner.userId}`, { session: member })).status).toBe(403);
    expect((await call(s.url, `/api/memory/core?userId=${owner.userId}`, { session: member })).status).toBe(
      403,
    );
    const patch = await call(s.url, `/api/memory/${ownerMemory.id}`, {
      session: member,
      method: "PATCH",
      body: { text: "hijacked" },
    });
    expect(patch.status).toBe(404);
    expect(
      (await call(s.url, `/api/memory/${ownerMemory.id}`, { session: member, method: "DELETE" })).status,
    ).toBe(404);
    expect((await memory.get(owner.userId, ownerMemory.id))?.text).toBe("The owner's secret plan");
    expect(
      (
        await call(s.url, `/api/memory/core/human?userId=${owner.userId}`, {
          session: member,
          method: "PUT",
          body: { value: "x" },
        })
      ).status,
    ).toBe(403);

    // An admin sees and edits the member's, by naming them or by id alone.
    const listed = await expectJson<MemoryRecord[]>(
      await call(s.url, `/api/memory?userId=${member.userId}`, { session: admin }),
      200,
    );
    expect(listed).toHaveLength(2);
    const edited = await expectJson<MemoryRecord>(
      await call(s.url, `/api/memory/${lisbon.id}`, {
        session: admin,
        method: "PATCH",
        body: { text: "Works in Porto" },
      }),
      200,
    );
    expect(edited).toMatchObject({ userId: member.userId, text: "Works in Porto" });
    const blocks = await expectJson<CoreBlock[]>(
      await call(s.url, `/api/memory/core?userId=${member.userId}`, { session: admin }),
      200,
    );
    expect(blocks.map((b) => b.label)).toEqual(["human"]);
    expect(
      (
        await call(s.url, `/api/memory/${lisbon.id}?userId=${member.userId}`, {
          session: admin,
          method: "DELETE",
        })
      ).status,
    ).toBe(204);
    expect((await call(s.url, "/api/memory?userId=nobody", { session: admin })).status).toBe(404);
  });
});
