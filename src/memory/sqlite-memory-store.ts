/** MemoryStore on SQLite: archival memories, core blocks and recall search over one connection. */
import type { Database } from "better-sqlite3";
import { joinGroupCommit } from "../store/group-commit.js";
import { sqliteDatabase } from "../store/sql-database.js";
import { storeError } from "../store/sqlite-errors.js";
import type { ArchivalOptions } from "./archival-rules.js";
import { CoreMemoryRepo } from "./core-memory.js";
import { ArchivalMemory } from "./sqlite/archival.js";
import { RecallSearch } from "./sqlite/recall.js";
import {
  type MemoryBackend,
  MemoryStoreFront,
  type MemoryStoreOptions,
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
    const archivalOptions: ArchivalOptions = { ...options };
    if (options.embedder) archivalOptions.embeddingModel = options.embedder.model;
    const archival = new ArchivalMemory(db, archivalOptions);
    this.archival = archival;
    const coreOptions: { defaultLimit?: number; now?: () => number } = {};
    if (options.coreLimit !== undefined) coreOptions.defaultLimit = options.coreLimit;
    if (options.now !== undefined) coreOptions.now = options.now;
    const core = new CoreMemoryRepo(sqliteDatabase(db, { groupCommit: true }), coreOptions);
    const recall = new RecallSearch(db);
    const rememberTx = db.transaction((inputs: PendingWrite[]): RememberResult[] =>
      inputs.map(({ input, vector, merge }) => archival.remember(input, vector, merge)),
    );
    this.backend = {
      write: (pending) => rememberTx(pending),
      search: (query) => archival.search(query),
      get: (userId, id) => archival.get(userId, id),
      list: (userId, agentId, type, limit, offset) => archival.list(userId, agentId, type, limit, offset),
      count: (userId) => archival.count(userId),
      forget: (userId, id) => archival.forget(userId, id),
      edit: (userId, id, next, vector) => archival.edit(userId, id, next, vector),
      touch: (userId, ids) => archival.touch(userId, ids),
      coreBlocks: (scope) => core.blocks(scope),
      allCoreBlocks: (userId) => core.all(userId),
      deleteCoreBlock: (scope, label) => core.remove(scope, label),
      coreEdit: (scope, label, edit) => core.edit(scope, label, edit),
      recall: (query) => recall.search(query),
    };
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
