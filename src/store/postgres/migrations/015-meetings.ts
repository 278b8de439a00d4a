/** Meetings in groups, saved after every statement, and their minutes. */
import { sqlMigration } from "../pg-migrations.js";

export const meetings = sqlMigration(15, "meetings in groups and their minutes", [
  `CREATE TABLE team_meetings (
    id TEXT PRIMARY KEY,
    channel_id TEXT NOT NULL REFERENCES team_channels (id) ON DELETE CASCADE,
    status TEXT NOT NULL,
    search_text TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  )`,
  "CREATE INDEX team_meetings_channel ON team_meetings (channel_id, created_at)",
  "CREATE INDEX team_meetings_status ON team_meetings (status)",
]);
