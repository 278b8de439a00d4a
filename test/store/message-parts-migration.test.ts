/**
 * Migration 10 on a real database file written by the previous schema: every stored channel message
 * gets its parts (its text as one part; none for an empty text), answers learn which message they
 * replied to from their run, and the team reads them back as it reads new ones.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../src/store/database.js";
import { migrations, schemaVersion } from "../../src/store/migrations.js";
import { createSqliteTeamStore } from "../../src/team/team-store.js";
import { tempDir } from "./helpers.js";

describe("migration 10: message parts", () => {
  it("backfills text parts and reply targets of messages stored before it", async () => {
    const file = join(tempDir(), "dimsum.db");
    const old = openDatabase(file, { migrations: migrations.slice(0, 9) });
    expect(schemaVersion(old)).toBe(9);
    const now = 1_700_000_000_000;
    old
      .prepare(
        "INSERT INTO team_channels (id, kind, name, created_by, created_at, updated_at) VALUES ('c1', 'group', 'G', 'u1', ?, ?)",
      )
      .run(now, now);
    const insert = old.prepare(
      `INSERT INTO team_messages (channel_id, author_type, author_id, text, run_id, mentions_json, created_at)
       VALUES ('c1', ?, ?, ?, ?, '[]', ?)`,
    );
    const question = Number(insert.run("user", "u1", "what is **2+2**?", null, now).lastInsertRowid);
    insert.run("agent", "coder", "It is 4.", "run-1", now + 1);
    insert.run("agent", "writer", "", "run-2", now + 2);
    insert.run("agent", "editor", "step output", "run-3", now + 3);
    const run = old.prepare(
      `INSERT INTO team_runs (id, channel_id, agent_id, trigger_message_id, status, flow_id, depth, requested_by,
         session_user_id, session_id, started_at) VALUES (?, 'c1', ?, ?, 'done', ?, 0, 'u1', 's', 's', ?)`,
    );
    run.run("run-1", "coder", question, null, now);
    run.run("run-2", "writer", question, null, now);
    run.run("run-3", "editor", question, "flow-1", now);
    old.close();

    const db = openDatabase(file);
    expect(schemaVersion(db)).toBe(migrations.length);
    const store = createSqliteTeamStore(db);
    const messages = await store.messages.list("c1", { limit: 10 });
    expect(messages.map((m) => [m.text, m.parts, m.replyTo])).toEqual([
      ["what is **2+2**?", [{ type: "text", text: "what is **2+2**?" }], undefined],
      ["It is 4.", [{ type: "text", text: "It is 4." }], question],
      ["", [], question],
      // A flow step's output is not a reply: it stays where it was posted.
      ["step output", [{ type: "text", text: "step output" }], undefined],
    ]);
    expect(messages.every((m) => m.versionOf === undefined && m.editedAt === undefined)).toBe(true);

    // New messages keep their parts next to the migrated ones.
    const saved = await store.messages.insert({
      channelId: "c1",
      author: { type: "agent", id: "coder" },
      text: "done",
      parts: [
        { type: "reasoning", text: "hmm" },
        { type: "text", text: "done" },
      ],
      replyTo: question,
      versionOf: messages[1]!.id,
      mentions: [],
      createdAt: now + 9,
    });
    expect(await store.messages.get(saved.id)).toEqual(saved);
    expect((await store.messages.replies(question)).map((m) => m.id)).toEqual([
      messages[1]!.id,
      messages[2]!.id,
      saved.id,
    ]);
    db.close();
  });
});
