/** Opens the Dimsum SQLite file: creates its folder, sets the pragmas we rely on, migrates. */
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import type BetterSqlite3 from "better-sqlite3";
import type { Database } from "better-sqlite3";
import { migrations as knownMigrations, type Migration, runMigrations } from "./migrations.js";
import { storeError } from "./sqlite-errors.js";

export type { Database } from "better-sqlite3";

// The native driver loads when the first database opens, so importing the store (or `dimsum`)
// costs nothing for commands that never touch SQLite. It is CommonJS: require keeps opening sync.
let driver: typeof BetterSqlite3 | undefined;
function sqliteDriver(): typeof BetterSqlite3 {
  driver ??= createRequire(import.meta.url)("better-sqlite3") as typeof BetterSqlite3;
  return driver;
}

export interface OpenDatabaseOptions {
  /** How long a write waits for another connection's lock before failing (default 5000 ms). */
  busyTimeoutMs?: number;
  /** Migrations to apply; the built-in list unless a test swaps it. */
  migrations?: readonly Migration[];
}

/**
 * Opens (creating if needed) the database at `file` in WAL mode with foreign keys on, and applies
 * pending migrations. `:memory:` works for tests of pure SQL.
 */
export function openDatabase(file: string, options: OpenDatabaseOptions = {}): Database {
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  const inMemory = file === ":memory:";
  let db: Database;
  try {
    if (!inMemory) mkdirSync(dirname(file), { recursive: true });
    db = new (sqliteDriver())(file, { timeout: busyTimeoutMs });
  } catch (err) {
    throw storeError(err, file, "open");
  }
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
    // WAL lets readers (the CLI's /history, `dimsum runs`) work while a run writes.
    db.pragma("journal_mode = WAL");
    // With WAL, NORMAL never corrupts the file; a power cut can lose only the last commits.
    db.pragma("synchronous = NORMAL");
    db.pragma("foreign_keys = ON");
    // Reads through a memory map skip a system call per page: index lookups that join FTS hits to
    // their rows (memory and message search) run 2-3x faster. Virtual address space only; the OS
    // page cache backs it, so it costs no heap.
    db.pragma("mmap_size = 268435456");
    runMigrations(db, options.migrations ?? knownMigrations);
    return db;
  } catch (err) {
    db.close();
    throw storeError(err, file, "open");
  }
}
