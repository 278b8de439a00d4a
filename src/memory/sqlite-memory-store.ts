/** MemoryStore on SQLite: archival memories, core blocks and recall search over one connection. */
import type { Database } from "better-sqlite3";
import { joinGroupCommit } from "../store/group-commit.js";
import { sqliteDatabase } from "../store/sql-database.js";
import { storeError } from "../store/sqlite-errors.js";
import { CoreMemoryRepo } from "./core-memory.js";
import { ArchivalMemory } from "./sqlite/archival.js";
import { RecallSearch } from "./sqlite/recall.js";
import {
  backendOptions,
  type MemoryBackend,
  MemoryStoreFront,
  type MemoryStoreOptions,
  memoryBackend,
  type PendingWrite,
} from "./store-front.js";
import type { RememberResult } from "./types.js";

export type SqliteMemoryStoreOptions = MemoryStoreOptions;

export class SqliteMemoryStore extends MemoryStoreFront {
  private readonly file: string;
  private readonly db: Database;
  private readonly archival: ArchivalMemory;
  protected readonly backend: MemoryBackend;

  /** `db` must come from `openDatabase` (migrated); the caller keeps ownership and closes it. */
  constructor(db: Database, options: SqliteMemoryStoreOptions = {}) {
    super(options);
    this.file = db.name;
    this.db = db;
    const { archival: archivalOptions, core: coreOptions } = backendOptions(options);
    const archival = new ArchivalMemory(db, archivalOptions);
    this.archival = archival;
    const rememberTx = db.transaction((inputs: PendingWrite[]): RememberResult[] =>
      inputs.map(({ input, vector, merge }) => archival.remember(input, vector, merge)),
    );
    this.backend = memoryBackend(
      (pending) => rememberTx(pending),
      archival,
      new CoreMemoryRepo(sqliteDatabase(db, { groupCommit: true }), coreOptions),
      new RecallSearch(db),
    );
  }

  // Vector caches were patched inside the transaction that just rolled back.
  protected override writeFailed(): void {
    this.archival.dropCaches();
  }

  protected async guard<T>(action: "read" | "write to", body: () => T | Promise<T>): Promise<T> {
    try {
      joinGroupCommit(this.db);
      return await body();
    } catch (err) {
      throw storeError(err, this.file, action);
    }
  }
}
