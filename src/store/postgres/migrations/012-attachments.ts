/** Files of chat messages, stored once by content (sha256) and linked to the chats that may read them. */
import { sqlMigration } from "../pg-migrations.js";

export const attachments = sqlMigration(12, "attachments stored by content, linked to chats", [
  `CREATE TABLE attachments (
    id TEXT PRIMARY KEY,
    mime_type TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('image', 'pdf', 'text')),
    size INTEGER NOT NULL,
    data BYTEA NOT NULL,
    created_at BIGINT NOT NULL
  )`,
  `CREATE TABLE attachment_links (
    channel_id TEXT NOT NULL REFERENCES team_channels (id) ON DELETE CASCADE,
    attachment_id TEXT NOT NULL REFERENCES attachments (id),
    name TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (channel_id, attachment_id)
  )`,
  "CREATE INDEX attachment_links_attachment ON attachment_links (attachment_id)",
]);
