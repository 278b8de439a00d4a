import { statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startBackgroundCheckpoints } from "../../src/store/background-checkpoint.js";
import { openDatabase } from "../../src/store/database.js";
import { tempDir } from "./helpers.js";

const PAGE = 4096;

describe("background WAL checkpoints", () => {
  it("copy committed pages into the database file from a worker, with auto-checkpoints off meanwhile", async () => {
    const file = join(tempDir(), "dimsum.db");
    const db = openDatabase(file);
    const errors: unknown[] = [];
    const checkpoints = startBackgroundCheckpoints(db, { intervalMs: 20, onError: (e) => errors.push(e) });
    expect(checkpoints).toBeDefined();
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(0);

    db.exec("CREATE TABLE blobs (id INTEGER PRIMARY KEY, data BLOB)");
    const insert = db.prepare("INSERT INTO blobs (data) VALUES (?)");
    const before = statSync(file).size;
    // ~2,500 pages: beyond the 1,000 at which SQLite would checkpoint inside a commit.
    db.transaction(() => {
      for (let i = 0; i < 2500; i++) insert.run(Buffer.alloc(3000, i % 251));
    })();
    const deadline = Date.now() + 10_000;
    while (statSync(file).size < before + 2000 * PAGE && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(statSync(file).size).toBeGreaterThan(before + 2000 * PAGE);

    await checkpoints!.stop();
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
    expect(db.prepare("SELECT count(*) FROM blobs").pluck().get()).toBe(2500);
    expect(errors).toEqual([]);
    db.close();
  });

  it("is not used for in-memory databases", () => {
    const db = openDatabase(":memory:");
    expect(startBackgroundCheckpoints(db)).toBeUndefined();
    db.close();
  });
});
