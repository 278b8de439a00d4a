/**
 * A PostgreSQL database for server state (`DIMSUM_DATABASE_URL=postgres://…`): a connection pool, typed
 * queries, transactions, and errors that say what to fix. The `pg` driver loads when the first
 * database opens, so the SQLite default (and the CLI) never pays for it.
 */
import { createRequire } from "node:module";
import type { Writable } from "node:stream";
import type { Pool, PoolClient, QueryConfig, QueryResult, QueryResultRow } from "pg";
import { DimsumError } from "../../errors.js";
import { redactUrl } from "../redact-url.js";
import { pgMigrations } from "./migrations/index.js";
import { type PgMigration, runPgMigrations } from "./pg-migrations.js";

type PgModule = typeof import("pg");
let driver: PgModule | undefined;
function pgDriver(): PgModule {
  driver ??= createRequire(import.meta.url)("pg") as PgModule;
  return driver;
}

/** What queries run on: the pool, or one client inside a transaction. */
export interface PgQueryable {
  /** Rows of a statement with `$1, $2, …` parameters. */
  many<T extends QueryResultRow>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** The first row, or undefined. */
  one<T extends QueryResultRow>(sql: string, params?: readonly unknown[]): Promise<T | undefined>;
  /** Runs a statement; resolves to the number of rows it touched. */
  run(sql: string, params?: readonly unknown[]): Promise<number>;
}

export interface PgDatabase extends PgQueryable {
  /** The URL without its password, for messages. */
  readonly label: string;
  /**
   * Runs `body` in one transaction on one connection (READ COMMITTED unless `serializable`), commits
   * when it resolves and rolls back when it throws.
   */
  transaction<T>(body: (tx: PgQueryable) => Promise<T>, options?: { serializable?: boolean }): Promise<T>;
  /** Ends every connection. */
  close(): Promise<void>;
  /** The pool itself, for LISTEN/NOTIFY and libraries that take one. */
  readonly pool: Pool;
}

export interface OpenPostgresOptions {
  /** Connections in the pool (default 10). */
  maxConnections?: number;
  /** Migrations to apply; the built-in list unless a test swaps it. */
  migrations?: readonly PgMigration[];
}

export { redactUrl } from "../redact-url.js";

function pgCode(err: unknown): string | undefined {
  if (err instanceof Error && "code" in err && typeof err.code === "string") return err.code;
  return undefined;
}

/**
 * Maps a driver error raised while `action` on the database `label`. What the user can fix (the
 * server is down, the database or role does not exist, the password is wrong) becomes a `config`
 * error; a conflict stays retryable; anything else is `internal`.
 */
export function pgError(err: unknown, label: string, action: string): DimsumError {
  if (err instanceof DimsumError) return err;
  const detail = err instanceof Error ? err.message : String(err);
  const code = pgCode(err) ?? "";
  const where = `the PostgreSQL database ${label}`;
  if (
    ["ECONNREFUSED", "ENOTFOUND", "EHOSTUNREACH", "ETIMEDOUT", "ECONNRESET", "57P01", "57P03"].includes(code)
  ) {
    return new DimsumError("config", `Could not ${action} ${where}: it is unreachable (${detail}).`, {
      hint: "start PostgreSQL, or fix the host and port in DIMSUM_DATABASE_URL",
      retryable: true,
      cause: err,
    });
  }
  if (code === "3D000" || code === "28000" || code === "28P01") {
    return new DimsumError("config", `Could not ${action} ${where}: ${detail}.`, {
      hint: "create the database and role, or fix the name, user and password in DIMSUM_DATABASE_URL",
      cause: err,
    });
  }
  if (code === "40001" || code === "40P01" || code === "55P03") {
    return new DimsumError("internal", `Could not ${action} ${where}: ${detail}`, {
      retryable: true,
      cause: err,
    });
  }
  if (code === "53100") {
    return new DimsumError("config", `Could not ${action} ${where}: the disk is full (${detail}).`, {
      hint: "free disk space on the database server",
      cause: err,
    });
  }
  return new DimsumError("internal", `Could not ${action} ${where}: ${detail}`, { cause: err });
}

const DML = /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b/i;

/** At most this many statement texts get a prepared statement on each connection. */
const MAX_PREPARED = 400;

/**
 * Names for prepared statements, one per statement text: PostgreSQL parses and plans a named
 * statement once per connection instead of at every call. Only queries and writes are named: DDL,
 * texts holding several statements (which the extended protocol refuses) and texts past
 * MAX_PREPARED (SQL built with varying lists) run unprepared.
 */
class StatementNames {
  readonly #names = new Map<string, string>();

  nameOf(sql: string): string | undefined {
    const known = this.#names.get(sql);
    if (known !== undefined || this.#names.size >= MAX_PREPARED) return known;
    if (!DML.test(sql) || sql.replace(/;\s*$/, "").includes(";")) return undefined;
    const name = `dimsum_${this.#names.size + 1}`;
    this.#names.set(sql, name);
    return name;
  }
}

// 0A000 "cached plan must not change result type": a migration of another instance changed a table
// a prepared `SELECT *` reads. The statement then runs once unprepared.
function isStalePlan(err: unknown): boolean {
  return pgCode(err) === "0A000" && err instanceof Error && /cached plan/i.test(err.message);
}

/** Where a Queryable sends its statements: a client in a transaction, or the tick batcher. */
interface QueryTarget {
  query<T extends QueryResultRow>(config: QueryConfig): Promise<QueryResult<T>>;
}

interface Waiting {
  config: QueryConfig;
  resolve: (result: QueryResult) => void;
  reject: (err: unknown) => void;
}

/** A connection-level failure (the server's errors carry a severity): the client is not reused. */
function isConnectionError(err: unknown): boolean {
  return !(err instanceof Error && "severity" in err);
}

/**
 * At most this many statements share one connection's write: the server runs a batch's statements one
 * after the other (each commit waiting for its WAL flush), so a large turn is spread over several.
 */
const MAX_BATCH = 8;

/**
 * Sends the statements asked for during one turn of the event loop together. One statement goes to
 * the pool as before; several go to one pooled connection (up to MAX_BATCH each), written back to
 * back in one write. The connections pipeline (the driver's `pipeline` mode): the server runs them in
 * order without a round trip between them, and every statement keeps its own Sync, so each is its own
 * implicit transaction and an error fails only its own statement. Statements of one turn are
 * independent by construction (none awaited another), so running them in one order on one connection
 * is one of the orders several connections could have run them in. On a busy server this turns many
 * small writes (each waking a server process) into a few larger ones.
 */
class TickBatcher implements QueryTarget {
  #waiting: Waiting[] = [];
  #scheduled = false;

  constructor(private readonly pool: Pool) {}

  query<T extends QueryResultRow>(config: QueryConfig): Promise<QueryResult<T>> {
    return new Promise<QueryResult<T>>((resolve, reject) => {
      this.#waiting.push({ config, resolve: resolve as (result: QueryResult) => void, reject });
      if (this.#scheduled) return;
      this.#scheduled = true;
      // After this turn's I/O callbacks (and the continuations they resumed) have asked for theirs.
      setImmediate(this.#flush);
    });
  }

  readonly #flush = (): void => {
    this.#scheduled = false;
    const all = this.#waiting;
    this.#waiting = [];
    for (let i = 0; i < all.length; i += MAX_BATCH) {
      const batch = all.slice(i, i + MAX_BATCH);
      const [only] = batch;
      if (batch.length === 1 && only) {
        this.pool.query(only.config).then(only.resolve, only.reject);
        continue;
      }
      this.pool.connect().then(
        (client) => this.#send(client, batch),
        (err: unknown) => {
          for (const waiting of batch) waiting.reject(err);
        },
      );
    }
  };

  #send(client: PoolClient, batch: Waiting[]): void {
    let left = batch.length;
    let broken: Error | undefined;
    const settled = () => {
      if (--left === 0) client.release(broken);
    };
    // The driver corks around each statement it writes; corked around all, they leave in one write.
    const stream = (client as unknown as { connection?: { stream?: Writable } }).connection?.stream;
    stream?.cork();
    try {
      for (const waiting of batch) {
        client.query(waiting.config).then(
          (result) => {
            waiting.resolve(result);
            settled();
          },
          (err: unknown) => {
            if (isConnectionError(err)) broken ??= err instanceof Error ? err : new Error(String(err));
            waiting.reject(err);
            settled();
          },
        );
      }
    } finally {
      stream?.uncork();
    }
  }
}

class Queryable implements PgQueryable {
  constructor(
    protected readonly target: QueryTarget,
    protected readonly labelText: string,
    protected readonly names: StatementNames,
  ) {}

  protected async send<T extends QueryResultRow>(sql: string, params: readonly unknown[]) {
    const name = this.names.nameOf(sql);
    const values = params as unknown[];
    if (name === undefined) return this.target.query<T>({ text: sql, values });
    try {
      return await this.target.query<T>({ name, text: sql, values });
    } catch (err) {
      if (!isStalePlan(err)) throw err;
      return this.target.query<T>({ text: sql, values });
    }
  }

  async many<T extends QueryResultRow>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    try {
      return (await this.send<T>(sql, params)).rows;
    } catch (err) {
      throw pgError(err, this.labelText, "query");
    }
  }

  async one<T extends QueryResultRow>(sql: string, params: readonly unknown[] = []): Promise<T | undefined> {
    return (await this.many<T>(sql, params))[0];
  }

  async run(sql: string, params: readonly unknown[] = []): Promise<number> {
    try {
      return (await this.send(sql, params)).rowCount ?? 0;
    } catch (err) {
      throw pgError(err, this.labelText, "write to");
    }
  }
}

class PoolDatabase extends Queryable implements PgDatabase {
  readonly label: string;
  readonly pool: Pool;

  constructor(pool: Pool, label: string) {
    super(new TickBatcher(pool), label, new StatementNames());
    this.pool = pool;
    this.label = label;
  }

  async transaction<T>(
    body: (tx: PgQueryable) => Promise<T>,
    options: { serializable?: boolean } = {},
  ): Promise<T> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw pgError(err, this.label, "connect to");
    }
    try {
      await client.query(options.serializable ? "BEGIN ISOLATION LEVEL SERIALIZABLE" : "BEGIN");
      const result = await body(new Queryable(client as QueryTarget, this.label, this.names));
      await client.query("COMMIT");
      return result;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw pgError(err, this.label, "write to");
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/**
 * Connects to the database at `url` and applies pending migrations (under an advisory lock, so
 * instances starting together migrate once). Throws a `config` DimsumError naming what to fix.
 */
export async function openPostgres(url: string, options: OpenPostgresOptions = {}): Promise<PgDatabase> {
  const label = redactUrl(url);
  const { Pool: PoolClass, types } = pgDriver();
  // BIGINT (epoch milliseconds, counts) comes back as a number, not a string.
  types.setTypeParser(20, (value: string) => Number(value));
  // Pipelined connections: a batch of statements (TickBatcher) is written at once, not one by one.
  const pool = new PoolClass({ connectionString: url, max: options.maxConnections ?? 10, pipeline: true });
  // An idle client losing its connection must not crash the process; the next query reports it.
  pool.on("error", () => undefined);
  const db = new PoolDatabase(pool, label);
  try {
    await runPgMigrations(db, options.migrations ?? pgMigrations);
    return db;
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw pgError(err, label, "open");
  }
}
