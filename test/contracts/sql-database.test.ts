/**
 * The one database interface the repositories are written against (store/sql-database.ts), on SQLite
 * and PostgreSQL: placeholders, rows, changes, and a transaction plan that commits or rolls back whole.
 */
import { expect, it } from "vitest";
import {
  many,
  numberPlaceholders,
  one,
  postgresDatabase,
  run,
  type SqlDatabase,
  sql,
  sqliteDatabase,
} from "../../src/store/sql-database.js";
import { describeBackends } from "./backends.js";

it("numbers PostgreSQL placeholders outside quoted text", () => {
  expect(numberPlaceholders("SELECT * FROM t WHERE a = ? AND b = '?' AND c = ?")).toBe(
    "SELECT * FROM t WHERE a = $1 AND b = '?' AND c = $2",
  );
  expect(sql({ sqlite: "SELECT ? AS x", postgres: "SELECT ?::int AS x" })).toEqual({
    sqlite: "SELECT ? AS x",
    postgres: "SELECT $1::int AS x",
  });
  expect(sql("SELECT $2 AS a, '$1' AS b, $1 AS c, $2 AS d")).toEqual({
    sqlite: "SELECT ? AS a, '$1' AS b, ? AS c, ? AS d",
    postgres: "SELECT $2 AS a, '$1' AS b, $1 AS c, $2 AS d",
    sqliteOrder: [1, 0, 1],
  });
});

const CREATE = sql("CREATE TABLE IF NOT EXISTS sql_contract (id TEXT PRIMARY KEY, n INTEGER NOT NULL)");
const INSERT = sql("INSERT INTO sql_contract (id, n) VALUES (?, ?)");
const BUMP = sql("UPDATE sql_contract SET n = n + ? WHERE id = ?");
const GET = sql("SELECT id, n FROM sql_contract WHERE id = ?");
const ALL = sql("SELECT id, n FROM sql_contract ORDER BY id");

describeBackends("the repositories' database interface", (open) => {
  async function database(): Promise<SqlDatabase> {
    const backend = await open();
    const db = backend.kind === "sqlite" ? sqliteDatabase(backend.db) : postgresDatabase(backend.db);
    await db.run("create a table in", CREATE);
    await db.run("empty a table in", sql("DELETE FROM sql_contract"));
    return db;
  }

  it("runs statements, counts changes and returns rows", async () => {
    const db = await database();
    expect(await db.run("write", INSERT, ["a", 1])).toBe(1);
    expect(await db.run("write", INSERT, ["b", 2])).toBe(1);
    expect(await db.run("write", BUMP, [10, "missing"])).toBe(0);
    expect(await db.one<{ id: string; n: number }>("read", GET, ["a"])).toEqual({ id: "a", n: 1 });
    expect(await db.one("read", GET, ["missing"])).toBeUndefined();
    expect(await db.many("read", ALL)).toEqual([
      { id: "a", n: 1 },
      { id: "b", n: 2 },
    ]);
  });

  it("binds numbered placeholders used twice and out of order", async () => {
    const db = await database();
    await db.run("write", INSERT, ["a", 1]);
    const twice = sql("UPDATE sql_contract SET n = n + $2 + $2 WHERE id = $1");
    expect(await db.run("write", twice, ["a", 3])).toBe(1);
    expect(await db.one("read", GET, ["a"])).toEqual({ id: "a", n: 7 });
  });

  it("commits a plan whole, handing each statement's result to the next", async () => {
    const db = await database();
    const total = await db.transaction("write", function* () {
      yield* run(INSERT, ["a", 1]);
      const changed = yield* run(BUMP, [5, "a"]);
      const row = yield* one<{ n: number }>(GET, ["a"]);
      const rows = yield* many<{ id: string }>(ALL);
      return { changed, n: row?.n, count: rows.length };
    });
    expect(total).toEqual({ changed: 1, n: 6, count: 1 });
  });

  it("rolls a plan back whole when a statement fails or the plan throws", async () => {
    const db = await database();
    await db.run("write", INSERT, ["a", 1]);
    await expect(
      db.transaction("write", function* () {
        yield* run(BUMP, [5, "a"]);
        yield* run(INSERT, ["a", 2]); // duplicate key
      }),
    ).rejects.toThrow();
    await expect(
      db.transaction("write", function* () {
        yield* run(BUMP, [5, "a"]);
        throw new Error("the plan gave up");
      }),
    ).rejects.toThrow("the plan gave up");
    expect(await db.one("read", GET, ["a"])).toEqual({ id: "a", n: 1 });
  });
});
