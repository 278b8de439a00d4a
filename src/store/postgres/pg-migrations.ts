/**
 * Numbered schema migrations for PostgreSQL, applied in order inside one transaction each under a
 * transaction-scoped advisory lock: several instances starting at once apply each exactly once.
 * `dimsum_schema_migrations` records each applied version, and every listed version not recorded yet
 * is applied in ascending order (so migrations written on parallel branches merge in any order). An
 * applied migration is never edited.
 */
import { DimsumError } from "../../errors.js";
import type { PgDatabase, PgQueryable } from "./pg-database.js";

export interface PgMigration {
  /** 1, 2, 3, ... without gaps. */
  version: number;
  name: string;
  /** Statements run in order in the migration's transaction. */
  up(tx: PgQueryable): Promise<void>;
}

export interface PgMigrationReport {
  /** Versions applied by this call, in order. */
  applied: number[];
}

// Any fixed 64-bit number: the advisory lock every Dimsum instance takes to migrate.
const MIGRATION_LOCK = 7_412_226_001;

function checkList(list: readonly PgMigration[]): void {
  list.forEach((m, i) => {
    const previous = list[i - 1];
    if (!Number.isInteger(m.version) || m.version < 1 || (previous && m.version <= previous.version)) {
      throw new DimsumError("internal", `PostgreSQL migration "${m.name}" has version ${m.version}.`, {
        hint: "migrations are numbered 1, 2, 3, ... in ascending order",
      });
    }
  });
}

/** Applies the pending migrations of `list`; refuses a database written by a newer Dimsum. */
export async function runPgMigrations(
  db: PgDatabase,
  list: readonly PgMigration[],
): Promise<PgMigrationReport> {
  checkList(list);
  const known = new Set(list.map((m) => m.version));
  return db.transaction(async (tx) => {
    await tx.run("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await tx.run(
      `CREATE TABLE IF NOT EXISTS dimsum_schema_migrations (
         version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`,
    );
    const done = new Set(
      (await tx.many<{ version: number }>("SELECT version FROM dimsum_schema_migrations")).map(
        (r) => r.version,
      ),
    );
    const unknown = [...done].filter((v) => !known.has(v));
    if (unknown.length > 0) {
      throw new DimsumError(
        "config",
        `the PostgreSQL database ${db.label} was written by a newer Dimsum (schema versions ${unknown.join(", ")} are unknown to this one); upgrade Dimsum`,
        { hint: "or point DIMSUM_DATABASE_URL at another database" },
      );
    }
    const applied: number[] = [];
    for (const migration of list.filter((m) => !done.has(m.version))) {
      try {
        await migration.up(tx);
      } catch (err) {
        throw new DimsumError(
          "internal",
          `PostgreSQL migration ${migration.version} (${migration.name}) failed on ${db.label}: ${
            err instanceof Error ? err.message : String(err)
          }`,
          { hint: "the database was left at the previous schema version; report this as a bug", cause: err },
        );
      }
      await tx.run("INSERT INTO dimsum_schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [
        migration.version,
        migration.name,
        Date.now(),
      ]);
      applied.push(migration.version);
    }
    return { applied };
  });
}

/** A migration made of plain SQL statements, run in order. */
export function sqlMigration(version: number, name: string, statements: readonly string[]): PgMigration {
  return {
    version,
    name,
    async up(tx) {
      for (const statement of statements) await tx.run(statement);
    },
  };
}
