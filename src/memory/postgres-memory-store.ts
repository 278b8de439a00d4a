/**
 * MemoryStore on PostgreSQL (migration 3): archival memories with FTS5-compatible BM25 and in-process
 * vectors, core blocks, and recall search over the session messages. Several instances may share the
 * database: writes of one user are serialized by a row lock, and vector caches follow a version.
 */
import { type PgDatabase, pgError } from "../store/postgres/pg-database.js";
import { postgresDatabase } from "../store/sql-database.js";
import { CoreMemoryRepo } from "./core-memory.js";
import { PgArchival } from "./postgres/archival.js";
import { PgRecall } from "./postgres/recall.js";
import {
  backendOptions,
  type MemoryBackend,
  MemoryStoreFront,
  type MemoryStoreOptions,
  memoryBackend,
} from "./store-front.js";

export type PostgresMemoryStoreOptions = MemoryStoreOptions;

export class PostgresMemoryStore extends MemoryStoreFront {
  protected readonly backend: MemoryBackend;

  /** `db` comes from `openPostgres` (migrated); the caller keeps ownership and closes it. */
  constructor(
    private readonly db: PgDatabase,
    options: PostgresMemoryStoreOptions = {},
  ) {
    super(options);
    const { archival: archivalOptions, core: coreOptions } = backendOptions(options);
    const archival = new PgArchival(db, archivalOptions);
    this.backend = memoryBackend(
      (pending) => archival.write(pending),
      archival,
      new CoreMemoryRepo(postgresDatabase(db), coreOptions),
      new PgRecall(db),
    );
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
