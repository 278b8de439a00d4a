import { join } from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { Message } from "../../src/llm/types.js";
import { openDatabase } from "../../src/store/database.js";
import { enableGroupCommit, joinGroupCommit } from "../../src/store/group-commit.js";
import { SqliteSessionStore } from "../../src/store/sqlite-session-store.js";
import { tempDir } from "./helpers.js";

const ref = { userId: "ana", sessionId: "s1" };
const hello: Message = { role: "user", content: "hello" };

function setup() {
  const file = join(tempDir(), "dimsum.db");
  const db = openDatabase(file);
  const other = openDatabase(file);
  const errors: unknown[] = [];
  enableGroupCommit(db, (err) => errors.push(err));
  const count = () => other.prepare("SELECT count(*) FROM messages").pluck().get() as number;
  return { file, db, other, errors, count, store: new SqliteSessionStore(db) };
}

describe("group commit", () => {
  it("commits the writes of one event-loop turn together, when the turn ends", async () => {
    const { db, other, store, count, errors } = setup();
    await store.openSession(ref);
    await store.appendMessages(ref, undefined, [hello]);
    await store.appendMessages(ref, undefined, [
      { role: "assistant", content: [{ type: "text", text: "hi" }] },
    ]);
    expect(db.inTransaction).toBe(true);
    expect(count()).toBe(0); // another connection sees nothing yet
    await nextTurn();
    expect(db.inTransaction).toBe(false);
    expect(count()).toBe(2);
    // The other connection can write between turns.
    other.prepare("UPDATE sessions SET title = 'renamed'").run();
    await store.appendMessages(ref, undefined, [hello]);
    await nextTurn();
    expect(count()).toBe(3);
    expect((await store.getSession(ref))?.title).toBe("renamed");
    expect(errors).toEqual([]);
  });

  it("keeps each repository transaction all-or-nothing inside the shared one", async () => {
    const { db, store, count } = setup();
    await store.openSession(ref);
    await store.appendMessages(ref, undefined, [hello]);
    const insert = db.prepare(
      "INSERT INTO messages (session_id, seq, role, content_json, created_at) VALUES (?, ?, 'user', '\"x\"', 0)",
    );
    const failing = db.transaction(() => {
      insert.run(1, 100);
      insert.run(1, 100); // duplicate (session_id, seq): fails, and so does the whole savepoint
    });
    joinGroupCommit(db);
    expect(() => failing()).toThrow(/UNIQUE/);
    await nextTurn();
    expect(count()).toBe(1);
  });

  it("commits before the connection closes, so nothing written is lost", async () => {
    const { file, db, store } = setup();
    await store.openSession(ref);
    await store.appendMessages(ref, undefined, [hello]);
    expect(db.inTransaction).toBe(true);
    db.close();
    const reopened = openDatabase(file);
    expect(reopened.prepare("SELECT count(*) FROM messages").pluck().get()).toBe(1);
    reopened.close();
  });

  it("does nothing on connections that did not enable it", async () => {
    const db = openDatabase(join(tempDir(), "plain.db"));
    const store = new SqliteSessionStore(db);
    await store.openSession(ref);
    expect(db.inTransaction).toBe(false);
    db.close();
  });
});
