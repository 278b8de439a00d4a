/**
 * Owners and visibility of agents and knowledge bases (the same columns as SQLite's migration 23).
 * NULL owner: made before owners existed, seen by everyone. `IF NOT EXISTS` keeps it idempotent.
 */
import { sqlMigration } from "../pg-migrations.js";

const COLUMNS = [
  "ADD COLUMN IF NOT EXISTS owner_id TEXT",
  "ADD COLUMN IF NOT EXISTS visibility TEXT NOT NULL DEFAULT 'everyone' CHECK (visibility IN ('everyone', 'people', 'private'))",
  "ADD COLUMN IF NOT EXISTS allowed_json TEXT NOT NULL DEFAULT '[]'",
].join(", ");

export const visibility = sqlMigration(18, "owners and visibility of agents and knowledge bases", [
  `ALTER TABLE team_agents ${COLUMNS}`,
  `ALTER TABLE kb_bases ${COLUMNS}`,
]);
