/**
 * Prepared statements by SQL text, per connection. `db.prepare` parses and plans the SQL every time
 * (tens of microseconds), which repositories calling it per request paid on every chat message.
 * Callers must not switch a cached statement's mode (`pluck`, `raw`, `expand`): others share it.
 */
import type { Database, Statement } from "better-sqlite3";

const caches = new WeakMap<Database, Map<string, Statement>>();

/** The connection's statement for `sql`, prepared on first use. */
export function cachedStatement(db: Database, sql: string): Statement {
  let cache = caches.get(db);
  if (!cache) {
    cache = new Map();
    caches.set(db, cache);
  }
  let statement = cache.get(sql);
  if (!statement) {
    statement = db.prepare(sql);
    cache.set(sql, statement);
  }
  return statement;
}
