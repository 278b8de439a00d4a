/**
 * One database interface for the repositories, over SQLite (better-sqlite3, synchronous) and
 * PostgreSQL (pg, asynchronous), so each aggregate's logic is written once and only SQL the dialects
 * really differ on stands apart (`sql({ sqlite, postgres })`, side by side).
 *
 * Single statements are promises on both. A transaction is a *plan*: a generator that yields its
 * statements (`yield* run(...)`, `const row = yield* one(...)`). On SQLite the plan is driven to its
 * end synchronously inside better-sqlite3's transaction, so nothing else can slip into it and no
 * statement pays a microtask; on PostgreSQL it is driven with `await` inside one client's
 * transaction. Statements are written with `?` or `$n` placeholders; each dialect's text is made
 * once, when the module defines its statements, and SQLite statements are prepared once per
 * connection (statement-cache.ts), as the hand-written repositories did.
 */
import type { Database } from "better-sqlite3";
import { joinGroupCommit } from "./group-commit.js";
import type { PgDatabase, PgQueryable } from "./postgres/pg-database.js";
import { storeError } from "./sqlite-errors.js";
import { cachedStatement } from "./statement-cache.js";

export type Dialect = "sqlite" | "postgres";

/** A statement's text in each dialect. */
export interface Sql {
  readonly sqlite: string;
  readonly postgres: string;
  /** For a statement written with `$n`: which value each SQLite `?` takes (0-based), in order. */
  readonly sqliteOrder?: readonly number[];
}

/**
 * A statement written once, or twice where the dialects differ. Placeholders are either `?` (values
 * in order) or `$1, $2, …` (a value may be used twice; both texts of a pair then number alike).
 * PostgreSQL gets `$n`, SQLite `?` (with the values reordered for `$n` statements), made here, once.
 */
export function sql(text: string | { sqlite: string; postgres: string }): Sql {
  const pair = typeof text === "string" ? { sqlite: text, postgres: text } : text;
  const lite = toQuestionMarks(pair.sqlite);
  return {
    sqlite: lite.text,
    postgres: numberPlaceholders(pair.postgres),
    ...(lite.order ? { sqliteOrder: lite.order } : {}),
  };
}

/** Calls `visit` for each character outside quoted strings and identifiers; its result replaces it. */
function outsideQuotes(
  text: string,
  visit: (rest: string) => { out: string; skip: number } | undefined,
): string {
  let out = "";
  let quote: string | undefined;
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i] ?? "";
    if (quote !== undefined) {
      if (ch === quote) quote = undefined;
      out += ch;
      continue;
    }
    if (ch === "'" || ch === '"') {
      quote = ch;
      out += ch;
      continue;
    }
    const replaced = visit(text.slice(i, i + 8));
    if (replaced === undefined) out += ch;
    else {
      out += replaced.out;
      i += replaced.skip - 1;
    }
  }
  return out;
}

/** `?` → `$1, $2, …` (a text already numbered is kept). */
export function numberPlaceholders(text: string): string {
  let n = 0;
  return outsideQuotes(text, (rest) => {
    if (!rest.startsWith("?")) return undefined;
    n += 1;
    return { out: `$${n}`, skip: 1 };
  });
}

/** `$n` → `?`, with the 0-based value index of each `?` (undefined for a text written with `?`). */
function toQuestionMarks(text: string): { text: string; order?: number[] } {
  const order: number[] = [];
  const out = outsideQuotes(text, (rest) => {
    const match = /^\$(\d+)/.exec(rest);
    if (!match?.[1]) return undefined;
    order.push(Number(match[1]) - 1);
    return { out: "?", skip: match[0].length };
  });
  return order.length === 0 ? { text } : { text: out, order };
}

/** `?, ?, …` for `count` values. */
export function marks(count: number): string {
  return Array.from({ length: count }, () => "?").join(", ");
}

/** One statement of a plan. */
export interface Step {
  readonly op: "run" | "one" | "many" | "insert";
  readonly sql: Sql;
  readonly params: readonly unknown[];
}

/** A transaction's statements, yielded in order; what it returns is the transaction's result. */
export type Plan<T> = Generator<Step, T, unknown>;

/** In a plan: runs a statement; the number of rows it touched. */
export function* run(statement: Sql, params: readonly unknown[] = []): Generator<Step, number, unknown> {
  return (yield { op: "run", sql: statement, params }) as number;
}

/**
 * In a plan: runs an INSERT and gives the new row's id: SQLite's last rowid (no RETURNING, which
 * costs SQLite a materialised result inside a transaction), PostgreSQL's `RETURNING id` (the
 * statement's PostgreSQL text ends with it).
 */
export function* insertId(statement: Sql, params: readonly unknown[] = []): Generator<Step, number, unknown> {
  return (yield { op: "insert", sql: statement, params }) as number;
}

/** In a plan: the first row of a statement, or undefined. */
export function* one<T>(
  statement: Sql,
  params: readonly unknown[] = [],
): Generator<Step, T | undefined, unknown> {
  return (yield { op: "one", sql: statement, params }) as T | undefined;
}

/** In a plan: every row of a statement. */
export function* many<T>(statement: Sql, params: readonly unknown[] = []): Generator<Step, T[], unknown> {
  return (yield { op: "many", sql: statement, params }) as T[];
}

/** What a repository runs on. `action` ("save a schedule in") words the error when SQLite fails. */
export interface SqlDatabase {
  readonly dialect: Dialect;
  run(action: string, statement: Sql, params?: readonly unknown[]): Promise<number>;
  one<T>(action: string, statement: Sql, params?: readonly unknown[]): Promise<T | undefined>;
  many<T>(action: string, statement: Sql, params?: readonly unknown[]): Promise<T[]>;
  /** Runs the plan in one transaction: committed when it returns, rolled back when it throws. */
  transaction<T>(action: string, plan: () => Plan<T>): Promise<T>;
}

/** Options of the SQLite interface. */
export interface SqliteDatabaseOptions {
  /**
   * Every call first joins the turn's shared transaction where the server turned group commit on
   * (store/group-commit.ts), as the team's and the session store's writes do.
   */
  groupCommit?: boolean;
}

/** The interface over a better-sqlite3 connection: every call settles in the same turn. */
export function sqliteDatabase(db: Database, options: SqliteDatabaseOptions = {}): SqlDatabase {
  const join = options.groupCommit === true;
  const values = (statement: Sql, params: readonly unknown[]): readonly unknown[] =>
    statement.sqliteOrder ? statement.sqliteOrder.map((i) => params[i]) : params;
  const step = (s: Step): unknown => {
    const statement = cachedStatement(db, s.sql.sqlite);
    const params = values(s.sql, s.params);
    if (s.op === "run") return statement.run(...params).changes;
    if (s.op === "insert") return Number(statement.run(...params).lastInsertRowid);
    if (s.op === "one") return statement.get(...params);
    return statement.all(...params);
  };
  // One transaction function for every plan (better-sqlite3 makes a savepoint of it when nested).
  const drive = db.transaction((plan: () => Plan<unknown>): unknown => {
    const steps = plan();
    let next = steps.next();
    while (!next.done) next = steps.next(step(next.value));
    return next.value;
  });
  const attempt = <T>(action: string, body: () => T): Promise<T> => {
    try {
      if (join) joinGroupCommit(db);
      return Promise.resolve(body());
    } catch (err) {
      return Promise.reject(storeError(err, db.name, action));
    }
  };
  return {
    dialect: "sqlite",
    run: (action, statement, params = []) =>
      attempt(action, () => cachedStatement(db, statement.sqlite).run(...values(statement, params)).changes),
    one: <T>(action: string, statement: Sql, params: readonly unknown[] = []) =>
      attempt(
        action,
        () => cachedStatement(db, statement.sqlite).get(...values(statement, params)) as T | undefined,
      ),
    many: <T>(action: string, statement: Sql, params: readonly unknown[] = []) =>
      attempt(action, () => cachedStatement(db, statement.sqlite).all(...values(statement, params)) as T[]),
    transaction: <T>(action: string, plan: () => Plan<T>) => attempt(action, () => drive(plan) as T),
  };
}

/** The interface over a PostgreSQL pool (errors are worded by pg-database.ts, as before). */
export function postgresDatabase(db: PgDatabase): SqlDatabase {
  const step = async (q: PgQueryable, s: Step): Promise<unknown> => {
    if (s.op === "run") return q.run(s.sql.postgres, s.params);
    if (s.op === "insert") return Number((await q.one<{ id: number }>(s.sql.postgres, s.params))?.id ?? 0);
    if (s.op === "one") return q.one(s.sql.postgres, s.params);
    return q.many(s.sql.postgres, s.params);
  };
  return {
    dialect: "postgres",
    run: (_action, statement, params = []) => db.run(statement.postgres, params),
    one: <T>(_action: string, statement: Sql, params: readonly unknown[] = []) =>
      db.one(statement.postgres, params) as Promise<T | undefined>,
    many: <T>(_action: string, statement: Sql, params: readonly unknown[] = []) =>
      db.many(statement.postgres, params) as Promise<T[]>,
    transaction: <T>(_action: string, plan: () => Plan<T>) =>
      db.transaction(async (tx) => {
        const steps = plan();
        let next = steps.next();
        while (!next.done) next = steps.next(await step(tx, next.value));
        return next.value;
      }),
  };
}

/** Whether a (wrapped) driver error is a unique-key violation, on either database. */
export function isUniqueViolation(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if ("code" in e && (e.code === "23505" || e.code === "SQLITE_CONSTRAINT_UNIQUE")) return true;
  }
  return false;
}
