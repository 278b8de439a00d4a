/**
 * MemoryStore on PostgreSQL (migration 3): archival memories with FTS5-compatible BM25 and in-process
 * vectors, core blocks, and recall search over the session messages. Several instances may share the
 * database: writes of one user are serialized by a row lock, and vector caches follow a version.
 */
import { type PgDatabase, pgError } from "../store/postgres/pg-database.js";
import { postgresDatabase } from "../store/sql-database.js";
import type { ArchivalOptions } from "./archival-rules.js";
import { CoreMemoryRepo } from "./core-memory.js";
import { PgArchival } from "./postgres/archival.js";
import { PgRecall } from "./postgres/recall.js";
import { type MemoryBackend, MemoryStoreFront, type MemoryStoreOptions } from "./store-front.js";

export type PostgresMemoryStoreOptions = MemoryStoreOptions;

export class PostgresMemoryStore extends MemoryStoreFront {
  protected readonly backend: MemoryBackend;

  /** `db` comes from `openPostgres` (migrated); the caller keeps ownership and closes it. */
  constructor(
    private readonly db: PgDatabase,
    options: PostgresMemoryStoreOptions = {},
  ) {
    super(options);
    const archivalOptions: ArchivalOptions = { ...options };
    if (options.embedder) archivalOptions.embeddingModel = options.embedder.model;
    const archival = new PgArchival(db, archivalOptions);
    const coreOptions: { defaultLimit?: number; now?: () => number } = {};
    if (options.coreLimit !== undefined) coreOptions.defaultLimit = options.coreLimit;
    if (options.now !== undefined) coreOptions.now = options.now;
    const core = new CoreMemoryRepo(postgresDatabase(db), coreOptions);
    const recall = new PgRecall(db);
    this.backend = {
      write: (pending) => archival.write(pending),
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

  protected async guard<T>(action: "read" | "write to", body: () => T | Promise<T>): Promise<T> {
    try {
      return await body();
    } catch (err) {
      throw pgError(err, this.db.label, action);
    }
  }
}

/** The memory store of a PostgreSQL database (for the composition root). */
export function createPostgresMemoryStore(
  db: PgDatabase,
  options: PostgresMemoryStoreOptions = {},
): PostgresMemoryStore {
  return new PostgresMemoryStore(db, options);
}
