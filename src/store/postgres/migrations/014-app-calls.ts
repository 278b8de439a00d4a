/** MCP App tool calls waiting for the person's approval, so any instance can take the answer. */
import { sqlMigration } from "../pg-migrations.js";

export const appCalls = sqlMigration(14, "MCP App tool calls waiting for approval", [
  `CREATE TABLE team_app_calls (
    id TEXT PRIMARY KEY,
    actor TEXT NOT NULL,
    channel_id TEXT NOT NULL REFERENCES team_channels (id) ON DELETE CASCADE,
    run_id TEXT NOT NULL,
    call_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    name TEXT NOT NULL,
    args TEXT NOT NULL,
    expires_at BIGINT NOT NULL
  )`,
  "CREATE INDEX team_app_calls_expiry ON team_app_calls (expires_at)",
]);
