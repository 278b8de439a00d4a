/**
 * `dimsum memory import FILE.jsonl` and `POST /api/memory/import`: many memories in one process,
 * into a real SQLite file; a file with a bad line stores nothing and names the line.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { SqliteMemoryStore } from "../../src/memory/sqlite-memory-store.js";
import { openDatabase } from "../../src/store/database.js";
import { call, withUsers } from "../server/helpers.js";
import { expectJson, startTeamServer } from "../server/team-helpers.js";
import { cleanEnv, runCli } from "../support/cli.js";

const COUNT = 1_200;

function lines(count: number): string {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const memory: Record<string, unknown> = {
      text: `turn ${i}: the user mentioned topic-${i} and item-${i % 37}`,
    };
    if (i % 3 === 0) memory.type = "episodic";
    if (i % 5 === 0) memory.tags = ["Imported", "batch"];
    if (i === 7) memory.userId = "other";
    if (i === 8) memory.importance = 9;
    out.push(JSON.stringify(memory));
  }
  return `${out.join("\n")}\n\n`;
}

it("imports a JSON Lines file in batches with progress, then searches it; a bad line stores nothing", async () => {
  const env = cleanEnv({ DIMSUM_USER: "ann" });
  const cwd = env.DIMSUM_HOME!;
  writeFileSync(join(cwd, "memories.jsonl"), lines(COUNT));

  const imported = await runCli(["memory", "import", "memories.jsonl"], { env, cwd, timeoutMs: 60_000 });
  expect(imported.code).toBe(0);
  expect(imported.stdout).toMatch(
    /^imported 1200 memories \(1200 added, 0 merged into near-duplicates\) in \d+\.\d s\n$/,
  );
  expect(imported.stderr).toBe("imported 500/1200\nimported 1000/1200\nimported 1200/1200\n");

  const db = openDatabase(join(env.DIMSUM_HOME!, "dimsum.db"));
  try {
    const store = new SqliteMemoryStore(db);
    expect(await store.count("ann")).toBe(COUNT - 1);
    expect(await store.count("other")).toBe(1);
    const all = await store.list("ann", { limit: 2000 });
    const eighth = all.find((m) => m.text.startsWith("turn 8:"));
    expect(eighth).toMatchObject({ type: "semantic", importance: 9 });
    expect(all.find((m) => m.text.startsWith("turn 5:"))?.tags).toEqual(["imported", "batch"]);
    expect(all.find((m) => m.text.startsWith("turn 3:"))?.type).toBe("episodic");
  } finally {
    db.close();
  }
  const search = await runCli(["memory", "search", "topic-1111"], { env, cwd });
  expect(search.stdout).toMatch(/^mode: bm25\n#\d+ .*turn 1111: the user mentioned topic-1111/);

  // Merging folds a repeated line into the memory it repeats.
  writeFileSync(
    join(cwd, "again.jsonl"),
    `${JSON.stringify({ text: "turn 4: the user mentioned topic-4 and item-4" })}\n`,
  );
  const merged = await runCli(["memory", "import", "--merge", "--json", "again.jsonl"], { env, cwd });
  expect(JSON.parse(merged.stdout)).toMatchObject({ imported: 1, added: 0, merged: 1 });

  writeFileSync(
    join(cwd, "bad.jsonl"),
    '{"text": "fine"}\n{"text": 5}\nnot json\n{"text": "x", "kind": "y"}\n',
  );
  const bad = await runCli(["memory", "import", "bad.jsonl", "--user", "bea"], { env, cwd });
  expect(bad.code).not.toBe(0);
  expect(bad.stderr).toContain("3 of 4 lines cannot be imported, so none was");
  expect(bad.stderr).toContain('line 2: "text" must be a string');
  expect(bad.stderr).toContain("line 3: not JSON");
  expect(bad.stderr).toContain("line 4: unknown field kind");
  const none = await runCli(["memory", "list", "--user", "bea"], { env, cwd });
  expect(none.stdout).toBe("no memories for bea\n");

  const missing = await runCli(["memory", "import", "nowhere.jsonl"], { env, cwd });
  expect(missing.code).not.toBe(0);
  expect(missing.stderr).toContain("cannot read nowhere.jsonl");
}, 90_000);

it("imports through the API: one's own memories, any user's for admins, nothing when an item is wrong", async () => {
  const s = await startTeamServer();
  const { owner, users } = await withUsers(s.url, ["member"]);
  const member = users.member!;
  const memories = Array.from({ length: 600 }, (_, i) => ({
    text: `fact ${i} about the garden`,
    tags: ["garden"],
  }));

  const result = await expectJson<{ imported: number; added: number; merged: number }>(
    await call(s.url, "/api/memory/import", { session: member, body: { memories } }),
    200,
  );
  expect(result).toMatchObject({ imported: 600, added: 600, merged: 0 });
  expect(await s.memory!.count(member.userId)).toBe(600);

  // A member may not write another user's memories, neither for the whole request nor per item.
  expect(
    (await call(s.url, "/api/memory/import", { session: member, body: { userId: owner.userId, memories } }))
      .status,
  ).toBe(403);
  const foreign = await call(s.url, "/api/memory/import", {
    session: member,
    body: { memories: [{ text: "mine" }, { text: "theirs", userId: owner.userId }] },
  });
  expect(foreign.status).toBe(400);
  expect(await foreign.text()).toContain(`memories[1]: you may not import memories of user ${owner.userId}`);
  expect(await s.memory!.count(member.userId)).toBe(600);

  const forMember = await expectJson<{ added: number }>(
    await call(s.url, "/api/memory/import", {
      session: owner,
      body: {
        userId: member.userId,
        agentId: "scribe",
        memories: [{ text: "likes roses", type: "semantic" }],
      },
    }),
    200,
  );
  expect(forMember.added).toBe(1);
  const roses = (await s.memory!.list(member.userId, { agentId: "scribe", limit: 1000 })).find(
    (m) => m.text === "likes roses",
  );
  expect(roses?.agentId).toBe("scribe");
  expect((await call(s.url, "/api/memory/import", { session: member, body: { memories: [] } })).status).toBe(
    400,
  );
});
