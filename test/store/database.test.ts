import { writeFileSync } from "node:fs";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { DimsumError } from "../../src/errors.js";
import { openDatabase } from "../../src/store/database.js";
import { type Migration, migrations, runMigrations, schemaVersion } from "../../src/store/migrations.js";
import { SqliteSessionStore } from "../../src/store/sqlite-session-store.js";
import { openTracked, tempDir } from "./helpers.js";

function catchError(fn: () => unknown): DimsumError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DimsumError);
    return err as DimsumError;
  }
  throw new Error("expected an error");
}

const tables = (db: BetterSqlite3.Database) =>
  db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();

describe("openDatabase", () => {
  it("creates the folder, sets WAL, NORMAL sync, foreign keys and a busy timeout", () => {
    const file = join(tempDir(), "nested", "home", "dimsum.db");
    const db = openTracked(file, { busyTimeoutMs: 1234 });
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.pragma("synchronous", { simple: true })).toBe(1); // NORMAL
    expect(db.pragma("foreign_keys", { simple: true })).toBe(1);
    expect(db.pragma("busy_timeout", { simple: true })).toBe(1234);
  });

  it("applies the migrations on open and records them", () => {
    const db = openTracked(join(tempDir(), "dimsum.db"));
    expect(schemaVersion(db)).toBe(migrations.length);
    expect(tables(db)).toEqual(
      expect.arrayContaining(["sessions", "messages", "runs", "run_events", "todos", "schema_migrations"]),
    );
    const recorded = db.prepare("SELECT version, name FROM schema_migrations ORDER BY version").all();
    expect(recorded).toEqual(migrations.map((m) => ({ version: m.version, name: m.name })));
  });

  it("is idempotent on reopen and keeps the data", async () => {
    const file = join(tempDir(), "dimsum.db");
    const first = openDatabase(file);
    await new SqliteSessionStore(first).openSession({ userId: "a", sessionId: "s" }, { title: "kept" });
    first.close();
    const again = openTracked(file);
    expect(runMigrations(again)).toEqual({ from: migrations.length, to: migrations.length, applied: [] });
    expect(again.prepare("SELECT count(*) FROM schema_migrations").pluck().get()).toBe(migrations.length);
    const session = await new SqliteSessionStore(again).getSession({ userId: "a", sessionId: "s" });
    expect(session?.title).toBe("kept");
  });

  it("applies a later appended migration once, on the next open", () => {
    const file = join(tempDir(), "dimsum.db");
    openDatabase(file).close();
    const next: Migration = {
      version: migrations.length + 1,
      name: "memory",
      up: (db) => db.exec("CREATE TABLE memory_items (id INTEGER PRIMARY KEY, text TEXT NOT NULL)"),
    };
    const db = openTracked(file, { migrations: [...migrations, next] });
    expect(schemaVersion(db)).toBe(next.version);
    expect(tables(db)).toContain("memory_items");
    expect(runMigrations(db, [...migrations, next]).applied).toEqual([]);
  });

  it("rolls a failing migration back entirely and names it", () => {
    const file = join(tempDir(), "dimsum.db");
    openDatabase(file).close();
    const broken: Migration = {
      version: migrations.length + 1,
      name: "broken",
      up: (db) => {
        db.exec("CREATE TABLE half_done (id INTEGER)");
        db.exec("THIS IS NOT SQL");
      },
    };
    const err = catchError(() => openDatabase(file, { migrations: [...migrations, broken] }));
    expect(err.message).toContain(`Migration ${broken.version} (broken) failed`);
    const db = openTracked(file);
    expect(schemaVersion(db)).toBe(migrations.length);
    expect(tables(db)).not.toContain("half_done");
  });

  it("refuses a migration list with gaps", () => {
    const db = new BetterSqlite3(":memory:");
    const err = catchError(() => runMigrations(db, [{ version: 2, name: "skips one", up: () => {} }]));
    expect(err.code).toBe("internal");
    expect(err.message).toContain("expected 1");
    db.close();
  });

  it("refuses a database written by a newer Dimsum", () => {
    const file = join(tempDir(), "dimsum.db");
    const raw = new BetterSqlite3(file);
    raw.pragma("user_version = 99");
    raw.close();
    const err = catchError(() => openDatabase(file));
    expect(err.code).toBe("config");
    expect(err.message).toBe(
      `database at ${file} was written by a newer Dimsum (schema 99 > ${migrations.length}); upgrade Dimsum`,
    );
  });

  it("works in memory for pure SQL tests", () => {
    const db = openTracked(":memory:");
    expect(schemaVersion(db)).toBe(migrations.length);
  });
});

describe("database errors name the file and DIMSUM_HOME", () => {
  it("reports a folder that cannot be created", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "home"), "a file where the folder should be");
    const file = join(dir, "home", "dimsum.db");
    const err = catchError(() => openDatabase(file));
    expect(err.code).toBe("config");
    expect(err.message).toContain(file);
    expect(err.message).toContain("not writable");
    expect(err.hint).toContain("DIMSUM_HOME");
  });

  it("reports a file that is not a database", () => {
    const file = join(tempDir(), "dimsum.db");
    writeFileSync(
      file,
      "this is not a SQLite database, just text that is long enough to have a header.".repeat(20),
    );
    const err = catchError(() => openDatabase(file));
    expect(err.code).toBe("config");
    expect(err.message).toContain(file);
    expect(err.hint).toContain("DIMSUM_HOME");
  });

  it("reports a database locked by another process as a config error", async () => {
    const file = join(tempDir(), "dimsum.db");
    const db = openTracked(file, { busyTimeoutMs: 20 });
    const store = new SqliteSessionStore(db);
    const other = new BetterSqlite3(file);
    other.exec("BEGIN IMMEDIATE");
    try {
      const err = await store.openSession({ userId: "a", sessionId: "s" }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(DimsumError);
      const dimsumError = err as DimsumError;
      expect(dimsumError.code).toBe("config");
      expect(dimsumError.message).toContain(file);
      expect(dimsumError.message).toContain("locked by another process");
      expect(dimsumError.hint).toContain("DIMSUM_HOME");
    } finally {
      other.exec("ROLLBACK");
      other.close();
    }
    await expect(store.openSession({ userId: "a", sessionId: "s" })).resolves.toMatchObject({ userId: "a" });
  });
});
