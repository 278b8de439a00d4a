/**
 * Statements asked for in one turn of the event loop go to PostgreSQL together, pipelined on one
 * connection, each still its own implicit transaction: one that fails fails alone, the others commit,
 * and a transaction keeps its own connection throughout.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PgDatabase } from "../../src/store/postgres/pg-database.js";
import { openTestPostgres, postgresAvailable } from "../support/postgres.js";

describe.skipIf(!postgresAvailable)("statement batches on PostgreSQL", () => {
  let db: PgDatabase & { dispose(): Promise<void> };

  beforeAll(async () => {
    db = await openTestPostgres();
    await db.run("CREATE TABLE batch_probe (id INTEGER PRIMARY KEY, note TEXT NOT NULL)");
  });
  afterAll(async () => {
    await db?.dispose();
  });

  it("sends the statements of one turn on one connection, in the order asked", async () => {
    const pids = await Promise.all(
      Array.from({ length: 6 }, () => db.one<{ pid: number }>("SELECT pg_backend_pid() AS pid")),
    );
    expect(new Set(pids.map((row) => row?.pid)).size).toBe(1);
    await Promise.all([
      db.run("INSERT INTO batch_probe (id, note) VALUES ($1, $2)", [1, "first"]),
      db.run("UPDATE batch_probe SET note = $2 WHERE id = $1", [1, "second"]),
    ]);
    expect(await db.one("SELECT note FROM batch_probe WHERE id = $1", [1])).toEqual({ note: "second" });
  });

  it("fails only the statement that fails; the others of its batch commit", async () => {
    const results = await Promise.allSettled([
      db.run("INSERT INTO batch_probe (id, note) VALUES ($1, $2)", [10, "kept"]),
      db.run("INSERT INTO batch_probe (id, note) VALUES ($1, $2)", [10, "duplicate"]),
      db.run("INSERT INTO batch_probe (id, note) VALUES ($1, $2)", [11, "kept too"]),
      db.many("SELECT * FROM no_such_table"),
      db.one<{ n: number }>("SELECT count(*)::int AS n FROM batch_probe WHERE id >= 10"),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      "fulfilled",
      "rejected",
      "fulfilled",
      "rejected",
      "fulfilled",
    ]);
    // The count ran after the two inserts before it (same connection, in order).
    expect((results[4] as PromiseFulfilledResult<{ n: number }>).value).toEqual({ n: 2 });
    const rows = await db.many("SELECT id, note FROM batch_probe WHERE id >= 10 ORDER BY id");
    expect(rows).toEqual([
      { id: 10, note: "kept" },
      { id: 11, note: "kept too" },
    ]);
  });

  it("keeps a transaction on its own connection while batches go on beside it", async () => {
    const outside = db.transaction(async (tx) => {
      await tx.run("INSERT INTO batch_probe (id, note) VALUES ($1, $2)", [20, "in the transaction"]);
      // Not visible to the batch until it commits.
      const seen = await Promise.all([
        db.one<{ n: number }>("SELECT count(*)::int AS n FROM batch_probe WHERE id = 20"),
        db.one<{ n: number }>("SELECT count(*)::int AS n FROM batch_probe WHERE id = 20"),
      ]);
      expect(seen).toEqual([{ n: 0 }, { n: 0 }]);
      throw new Error("roll back");
    });
    await expect(outside).rejects.toThrow(/roll back/);
    expect(await db.one("SELECT count(*)::int AS n FROM batch_probe WHERE id = 20")).toEqual({ n: 0 });
    await db.transaction(async (tx) => {
      await tx.run("INSERT INTO batch_probe (id, note) VALUES ($1, $2)", [21, "committed"]);
    });
    expect(await db.one("SELECT note FROM batch_probe WHERE id = 21")).toEqual({ note: "committed" });
  });
});
