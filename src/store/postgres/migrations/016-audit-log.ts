/** The audit log: security-relevant actions chained by hash, and the chain's head (the same columns as SQLite's migration 21). */
import { sqlMigration } from "../pg-migrations.js";

export const auditLog = sqlMigration(16, "audit_log and its chain head", [
  `CREATE TABLE audit_log (
    seq BIGINT PRIMARY KEY,
    at BIGINT NOT NULL,
    actor_id TEXT,
    actor_name TEXT,
    action TEXT NOT NULL,
    target TEXT,
    ip TEXT,
    user_agent TEXT,
    instance TEXT,
    before_json TEXT,
    after_json TEXT,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
  )`,
  "CREATE INDEX audit_log_at ON audit_log (at)",
  "CREATE INDEX audit_log_actor ON audit_log (actor_id, seq)",
  "CREATE INDEX audit_log_action ON audit_log (action, seq)",
  `CREATE TABLE audit_head (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    seq BIGINT NOT NULL,
    hash TEXT NOT NULL,
    pruned_seq BIGINT NOT NULL,
    pruned_hash TEXT NOT NULL,
    retention_days INTEGER NOT NULL
  )`,
]);
