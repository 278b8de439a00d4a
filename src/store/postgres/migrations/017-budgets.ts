/** Budgets and their counters per period (the same columns as SQLite's migration 22). */
import { sqlMigration } from "../pg-migrations.js";

export const budgets = sqlMigration(17, "budgets and their counters", [
  `CREATE TABLE budgets (
    id TEXT PRIMARY KEY,
    scope TEXT NOT NULL CHECK (scope IN ('person', 'agent', 'group')),
    scope_id TEXT NOT NULL,
    period TEXT NOT NULL CHECK (period IN ('day', 'month')),
    unit TEXT NOT NULL CHECK (unit IN ('usd', 'tokens')),
    soft_limit DOUBLE PRECISION,
    hard_limit DOUBLE PRECISION,
    cheaper_model TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (scope, scope_id, period, unit)
  )`,
  `CREATE TABLE budget_counters (
    budget_id TEXT NOT NULL REFERENCES budgets (id) ON DELETE CASCADE,
    period_key TEXT NOT NULL,
    spent DOUBLE PRECISION NOT NULL,
    reserved DOUBLE PRECISION NOT NULL,
    last_run DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (budget_id, period_key)
  )`,
]);
