/**
 * Schedules with their runs, and chat connectors with their mappings, inbound de-dup keys, outbox,
 * driver state and poll leases. The same columns as the SQLite schema (migrations 6, 7 and 11), so
 * both backends map rows with the same code; times are epoch milliseconds. Text keys compare
 * bytewise (COLLATE "C"), as SQLite's do, so lists come back in the same order on both.
 *
 * Differences from SQLite: `schedule_runs.seq` stands in for SQLite's rowid (insertion order of
 * runs); `connector_users.user_id` has no foreign key to `users`, whose table another migration
 * creates (a user's mappings are removed by that user's deletion code, not by a cascade).
 */
import { sqlMigration } from "../pg-migrations.js";

export const schedulesAndConnectors = sqlMigration(5, "schedules and chat connectors", [
  `CREATE TABLE schedules (
    id TEXT COLLATE "C" PRIMARY KEY,
    name TEXT NOT NULL,
    owner_id TEXT COLLATE "C" NOT NULL,
    enabled INTEGER NOT NULL DEFAULT 1,
    timing_json TEXT NOT NULL,
    target_json TEXT NOT NULL,
    missed_policy TEXT NOT NULL CHECK (missed_policy IN ('skip', 'run_once')),
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    last_run_at BIGINT,
    next_run_at BIGINT,
    run_requested_at BIGINT
  )`,
  "CREATE INDEX schedules_owner ON schedules (owner_id, created_at)",
  "CREATE INDEX schedules_due ON schedules (next_run_at) WHERE enabled = 1 AND next_run_at IS NOT NULL",
  "CREATE INDEX schedules_requested ON schedules (run_requested_at) WHERE run_requested_at IS NOT NULL",
  `CREATE TABLE schedule_runs (
    id TEXT COLLATE "C" PRIMARY KEY,
    seq BIGSERIAL NOT NULL,
    schedule_id TEXT COLLATE "C" NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
    run_trigger TEXT NOT NULL CHECK (run_trigger IN ('schedule', 'manual', 'missed')),
    scheduled_for BIGINT,
    started_at BIGINT NOT NULL,
    ended_at BIGINT,
    status TEXT NOT NULL CHECK (status IN ('running', 'done', 'error', 'skipped')),
    output TEXT,
    error TEXT,
    team_run_id TEXT,
    flow_id TEXT,
    message_id BIGINT,
    heartbeat_at BIGINT
  )`,
  "CREATE INDEX schedule_runs_schedule ON schedule_runs (schedule_id, started_at, seq)",
  "CREATE INDEX schedule_runs_running ON schedule_runs (status) WHERE status = 'running'",
  `CREATE TABLE connectors (
    id TEXT COLLATE "C" PRIMARY KEY,
    type TEXT NOT NULL CHECK (type IN ('telegram', 'webhook', 'feishu')),
    name TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    settings_json TEXT NOT NULL DEFAULT '{}',
    secrets_enc TEXT,
    secret_previews_json TEXT NOT NULL DEFAULT '{}',
    user_mode TEXT NOT NULL DEFAULT 'guest' CHECK (user_mode IN ('guest', 'user')),
    user_id TEXT,
    enabled INTEGER NOT NULL DEFAULT 0,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  )`,
  `CREATE TABLE connector_users (
    connector_id TEXT COLLATE "C" NOT NULL REFERENCES connectors (id) ON DELETE CASCADE,
    external_user_id TEXT COLLATE "C" NOT NULL,
    user_id TEXT NOT NULL,
    PRIMARY KEY (connector_id, external_user_id)
  )`,
  "CREATE INDEX connector_users_user ON connector_users (user_id)",
  `CREATE TABLE connector_chats (
    connector_id TEXT COLLATE "C" NOT NULL REFERENCES connectors (id) ON DELETE CASCADE,
    external_chat_id TEXT COLLATE "C" NOT NULL,
    channel_id TEXT NOT NULL REFERENCES team_channels (id) ON DELETE CASCADE,
    PRIMARY KEY (connector_id, external_chat_id)
  )`,
  "CREATE INDEX connector_chats_channel ON connector_chats (channel_id)",
  `CREATE TABLE connector_inbound (
    connector_id TEXT COLLATE "C" NOT NULL REFERENCES connectors (id) ON DELETE CASCADE,
    dedupe_key TEXT COLLATE "C" NOT NULL,
    received_at BIGINT NOT NULL,
    PRIMARY KEY (connector_id, dedupe_key)
  )`,
  "CREATE INDEX connector_inbound_age ON connector_inbound (received_at)",
  `CREATE TABLE connector_outbox (
    id BIGSERIAL PRIMARY KEY,
    connector_id TEXT COLLATE "C" NOT NULL REFERENCES connectors (id) ON DELETE CASCADE,
    chat_id TEXT COLLATE "C" NOT NULL,
    payload_json TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    last_error TEXT,
    created_at BIGINT NOT NULL,
    claimed_by TEXT,
    claimed_until BIGINT
  )`,
  "CREATE INDEX connector_outbox_due ON connector_outbox (connector_id, status, chat_id, id)",
  `CREATE TABLE connector_state (
    connector_id TEXT COLLATE "C" NOT NULL REFERENCES connectors (id) ON DELETE CASCADE,
    key TEXT COLLATE "C" NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (connector_id, key)
  )`,
  `CREATE TABLE connector_leases (
    connector_id TEXT COLLATE "C" PRIMARY KEY REFERENCES connectors (id) ON DELETE CASCADE,
    holder TEXT,
    token BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
  )`,
]);
