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
 * `open()` gives each test its own empty, migrated database, closed (and dropped) after the test.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe } from "vitest";
import { type Database, openDatabase } from "../../src/store/database.js";
import type { PgDatabase } from "../../src/store/postgres/pg-database.js";
import { openTestPostgres, postgresAvailable } from "../support/postgres.js";

export type Backend = { kind: "sqlite"; db: Database; file: string } | { kind: "postgres"; db: PgDatabase };
export type BackendKind = Backend["kind"];

async function openBackend(kind: BackendKind, cleanups: Array<() => Promise<void>>): Promise<Backend> {
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
  const db = await openTestPostgres();
  cleanups.push(() => db.dispose());
  return { kind, db };
}

/** Declares `body`'s tests once per backend, named `<title> on sqlite` / `on postgres`. */
export function describeBackends(
  title: string,
  body: (open: () => Promise<Backend>, kind: BackendKind) => void,
): void {
  for (const kind of ["sqlite", "postgres"] as const) {
    describe.skipIf(kind === "postgres" && !postgresAvailable)(`${title} on ${kind}`, () => {
      const cleanups: Array<() => Promise<void>> = [];
      afterEach(async () => {
        for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
      });
      body(() => openBackend(kind, cleanups), kind);
    });
  }
}
