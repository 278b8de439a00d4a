/**
 * The two storage backends every repository contract runs against: a SQLite file in a temporary
 * folder and a fresh PostgreSQL database (skipped, with a note, where no server is reachable).
 *
 *   describeBackends("schedule repository", (open) => {
 *     it("…", async () => {
 *       const backend = await open();
 *       const repo = backend.kind === "sqlite" ? new SqliteX(backend.db) : new PgX(backend.db);
 *       …
 *     });
 *   });
 *
 * `open()` gives each test an empty, migrated database: a new SQLite file, or the suite's PostgreSQL
 * database with every table emptied (call it once per test).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe } from "vitest";
import { type Database, openDatabase } from "../../src/store/database.js";
import type { PgDatabase } from "../../src/store/postgres/pg-database.js";
import { openTestPostgres, postgresAvailable } from "../support/postgres.js";

export type Backend = { kind: "sqlite"; db: Database; file: string } | { kind: "postgres"; db: PgDatabase };
export type BackendKind = Backend["kind"];

/**
 * One PostgreSQL database per describe block, emptied before each test: creating a database costs
 * about half a second, emptying its tables a few milliseconds.
 */
class PostgresPerSuite {
  #db: (PgDatabase & { dispose(): Promise<void> }) | undefined;

  async fresh(): Promise<PgDatabase> {
    if (!this.#db) {
      this.#db = await openTestPostgres();
      return this.#db;
    }
    const tables = await this.#db.many<{ name: string }>(
      `SELECT quote_ident(tablename) AS name FROM pg_tables
       WHERE schemaname = current_schema() AND tablename <> 'dimsum_schema_migrations'`,
    );
    if (tables.length > 0) {
      await this.#db.run(`TRUNCATE ${tables.map((t) => t.name).join(", ")} RESTART IDENTITY CASCADE`);
    }
    return this.#db;
  }

  async dispose(): Promise<void> {
    await this.#db?.dispose();
    this.#db = undefined;
  }
}

async function openBackend(
  kind: BackendKind,
  cleanups: Array<() => Promise<void>>,
  postgres: PostgresPerSuite,
): Promise<Backend> {
  if (kind === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "dimsum-contract-"));
    const file = join(dir, "dimsum.db");
    const db = openDatabase(file);
    cleanups.push(async () => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    });
    return { kind, db, file };
  }
  return { kind, db: await postgres.fresh() };
}

/** Declares `body`'s tests once per backend, named `<title> on sqlite` / `on postgres`. */
export function describeBackends(
  title: string,
  body: (open: () => Promise<Backend>, kind: BackendKind) => void,
): void {
  for (const kind of ["sqlite", "postgres"] as const) {
    describe.skipIf(kind === "postgres" && !postgresAvailable)(`${title} on ${kind}`, () => {
      const cleanups: Array<() => Promise<void>> = [];
      const postgres = new PostgresPerSuite();
      afterEach(async () => {
        for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
      });
      afterAll(() => postgres.dispose());
      body(() => openBackend(kind, cleanups, postgres), kind);
    });
  }
}

/** Runs raw SQL (`?` placeholders) on either backend, the way an older Dimsum or a damaged row might. */
export async function rawSql<T = Record<string, unknown>>(
  backend: Backend,
  sql: string,
  params: readonly unknown[] = [],
): Promise<T[]> {
  if (backend.kind === "sqlite") {
    const statement = backend.db.prepare(sql);
    if (statement.reader) return statement.all(...params) as T[];
    statement.run(...params);
    return [];
  }
  let n = 0;
  return backend.db.many(
    sql.replace(/\?/g, () => `$${++n}`),
    params,
  ) as Promise<T[]>;
}
