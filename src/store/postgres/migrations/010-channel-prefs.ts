/** Each person's pinned and archived chats. */
import type { PgMigration } from "../pg-migrations.js";

const statements = [
  `CREATE TABLE team_channel_prefs (
    channel_id TEXT NOT NULL REFERENCES team_channels (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    pinned_at BIGINT,
    archived_at BIGINT,
    PRIMARY KEY (channel_id, user_id)
  )`,
  "CREATE INDEX team_channel_prefs_user ON team_channel_prefs (user_id)",
];

export const channelPrefs: PgMigration = {
  version: 10,
  name: "each person's pinned and archived chats",
  async up(tx) {
    for (const statement of statements) await tx.run(statement);
  },
};
