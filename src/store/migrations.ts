/**
 * Numbered schema migrations. `PRAGMA user_version` holds the applied version (cheap to read on every
 * open); `schema_migrations` keeps a readable record. Later features (memory, knowledge base) append
 * new entries to `migrations`; an applied migration is never edited.
 */
import type { Database } from "better-sqlite3";
import { DimsumError } from "../errors.js";
import { splitCjkCharsColumn } from "./fts-columns-migration.js";
import { sqliteCode, storeError } from "./sqlite-errors.js";

export interface Migration {
  /** 1, 2, 3, ... without gaps. */
  version: number;
  name: string;
  up(db: Database): void;
}

export interface MigrationReport {
  from: number;
  to: number;
  applied: number[];
}

const sessionsSchema = `
CREATE TABLE sessions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id TEXT NOT NULL,
  session_key TEXT NOT NULL,
  title TEXT,
  summary TEXT,
  summary_updated_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (user_id, session_key)
);
CREATE INDEX sessions_user_updated ON sessions (user_id, updated_at);

CREATE TABLE messages (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  run_id TEXT,
  seq INTEGER NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
  content_json TEXT NOT NULL,
  tool_call_id TEXT,
  tool_name TEXT,
  is_error INTEGER,
  created_at INTEGER NOT NULL,
  tokens_estimate INTEGER,
  compacted INTEGER NOT NULL DEFAULT 0,
  UNIQUE (session_id, seq)
);
CREATE INDEX messages_session ON messages (session_id, id);
-- Live context loads stay flat however much compacted history a session has.
CREATE INDEX messages_session_live ON messages (session_id, id) WHERE compacted = 0;

CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  status TEXT NOT NULL CHECK (status IN ('running', 'done', 'error', 'cancelled', 'interrupted')),
  model TEXT NOT NULL,
  prompt TEXT,
  started_at INTEGER NOT NULL,
  ended_at INTEGER,
  iterations INTEGER NOT NULL DEFAULT 0,
  usage_json TEXT,
  error TEXT,
  note TEXT
);
CREATE INDEX runs_session ON runs (session_id, started_at);
CREATE INDEX runs_running ON runs (session_id) WHERE status = 'running';

CREATE TABLE run_events (
  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  type TEXT NOT NULL,
  payload_json TEXT NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

CREATE TABLE todos (
  session_id INTEGER PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
  items_json TEXT NOT NULL,
  updated_at INTEGER NOT NULL
);
`;

// Long-term memory. `memories_fts.terms` holds text the memory layer has already tokenised (stems,
// CJK bigrams), so FTS5 only splits on spaces; the app writes it, a trigger removes it. Triggers keep a
// per-user row count and a version that in-memory vector caches compare against, whoever wrote.
const memorySchema = `
CREATE TABLE memories (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id TEXT NOT NULL,
  agent_id TEXT NOT NULL DEFAULT '',
  type TEXT NOT NULL CHECK (type IN ('semantic', 'episodic', 'procedural')),
  text TEXT NOT NULL,
  tags_json TEXT NOT NULL DEFAULT '[]',
  importance INTEGER NOT NULL CHECK (importance BETWEEN 1 AND 10),
  confidence REAL NOT NULL CHECK (confidence BETWEEN 0 AND 1),
  source_session_id TEXT,
  source_run_id TEXT,
  access_count INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  last_accessed_at INTEGER,
  embedding BLOB,
  embedding_model TEXT,
  embedding_dims INTEGER
);
CREATE INDEX memories_user ON memories (user_id, agent_id, updated_at);
CREATE INDEX memories_user_model ON memories (user_id, embedding_model);

CREATE VIRTUAL TABLE memories_fts USING fts5 (terms, tokenize = "unicode61 remove_diacritics 0 categories 'L* N* Co M*'");
CREATE VIRTUAL TABLE memories_fts_vocab USING fts5vocab (memories_fts, 'row');

CREATE TABLE memory_user_state (
  user_id TEXT PRIMARY KEY,
  version INTEGER NOT NULL,
  count INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TRIGGER memories_after_insert AFTER INSERT ON memories BEGIN
  INSERT INTO memory_user_state (user_id, version, count) VALUES (new.user_id, 1, 1)
    ON CONFLICT (user_id) DO UPDATE SET version = version + 1, count = count + 1;
END;
CREATE TRIGGER memories_after_delete AFTER DELETE ON memories BEGIN
  DELETE FROM memories_fts WHERE rowid = old.id;
  UPDATE memory_user_state SET version = version + 1, count = count - 1 WHERE user_id = old.user_id;
END;
CREATE TRIGGER memories_after_update AFTER UPDATE OF text, type, agent_id, embedding, embedding_model ON memories
BEGIN
  UPDATE memory_user_state SET version = version + 1 WHERE user_id = new.user_id;
END;

CREATE TABLE core_memory (
  user_id TEXT NOT NULL,
  agent_id TEXT NOT NULL DEFAULT '',
  label TEXT NOT NULL,
  value TEXT NOT NULL,
  char_limit INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (user_id, agent_id, label)
) WITHOUT ROWID;
`;

// Recall search: the text of user and assistant messages, indexed by trigrams (CJK needs no word
// splitting that way), rowid = messages.id, kept in sync by triggers so every writer is covered.
const messageText = (row: string) => `CASE json_type(${row}.content_json)
    WHEN 'text' THEN ${row}.content_json ->> '$'
    WHEN 'array' THEN (SELECT group_concat(value ->> '$.text', char(10)) FROM json_each(${row}.content_json)
                       WHERE value ->> '$.type' = 'text')
  END`;

const recallSchema = `
CREATE VIRTUAL TABLE messages_fts USING fts5 (text, tokenize = 'trigram remove_diacritics 1');

CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
WHEN new.role IN ('user', 'assistant') AND json_valid(new.content_json)
BEGIN
  INSERT INTO messages_fts (rowid, text) SELECT new.id, t FROM (SELECT ${messageText("new")} AS t) WHERE t <> '';
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
  DELETE FROM messages_fts WHERE rowid = old.id;
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content_json, role ON messages BEGIN
  DELETE FROM messages_fts WHERE rowid = old.id;
  INSERT INTO messages_fts (rowid, text)
    SELECT new.id, t FROM (SELECT ${messageText("new")} AS t)
    WHERE t <> '' AND new.role IN ('user', 'assistant') AND json_valid(new.content_json);
END;

INSERT INTO messages_fts (rowid, text)
  SELECT id, t FROM (SELECT m.id AS id, ${messageText("m")} AS t FROM messages m
                     WHERE m.role IN ('user', 'assistant') AND json_valid(m.content_json))
  WHERE t <> '';
`;

// The team platform: agents, channels with members and chain, channel messages (their search terms
// are written by the app: CJK bigrams, see src/team/search-text.ts; a trigger removes them), read
// markers (people, and `agent:<id>` for what an agent has seen), runs, flows and team settings.
// Runs keep no foreign key: runs of the OpenAI-compatible endpoint belong to no channel.
const teamSchema = `
CREATE TABLE team_agents (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  emoji TEXT NOT NULL DEFAULT '',
  model TEXT,
  tools_allow_json TEXT,
  tools_deny_json TEXT NOT NULL DEFAULT '[]',
  memory INTEGER NOT NULL DEFAULT 1,
  skills_json TEXT NOT NULL DEFAULT '[]',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

CREATE TABLE team_channels (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('direct', 'group')),
  name TEXT NOT NULL,
  leader_agent_id TEXT,
  chain_json TEXT NOT NULL DEFAULT '[]',
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

CREATE TABLE team_channel_members (
  channel_id TEXT NOT NULL REFERENCES team_channels (id) ON DELETE CASCADE,
  member_type TEXT NOT NULL CHECK (member_type IN ('user', 'agent')),
  member_id TEXT NOT NULL,
  added_at INTEGER NOT NULL,
  PRIMARY KEY (channel_id, member_type, member_id)
) WITHOUT ROWID;
CREATE INDEX team_channel_members_member ON team_channel_members (member_type, member_id, channel_id);

CREATE TABLE team_messages (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  channel_id TEXT NOT NULL REFERENCES team_channels (id) ON DELETE CASCADE,
  author_type TEXT NOT NULL CHECK (author_type IN ('user', 'agent', 'system')),
  author_id TEXT NOT NULL,
  text TEXT NOT NULL,
  run_id TEXT,
  mentions_json TEXT NOT NULL DEFAULT '[]',
  created_at INTEGER NOT NULL
);
CREATE INDEX team_messages_channel ON team_messages (channel_id, id);

CREATE VIRTUAL TABLE team_messages_fts USING fts5 (terms, tokenize = "unicode61 remove_diacritics 2 categories 'L* N* Co M*'");
CREATE TRIGGER team_messages_after_delete AFTER DELETE ON team_messages BEGIN
  DELETE FROM team_messages_fts WHERE rowid = old.id;
END;

CREATE TABLE team_read_markers (
  reader_id TEXT NOT NULL,
  channel_id TEXT NOT NULL REFERENCES team_channels (id) ON DELETE CASCADE,
  message_id INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (reader_id, channel_id)
) WITHOUT ROWID;

CREATE TABLE team_runs (
  id TEXT PRIMARY KEY,
  channel_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  trigger_message_id INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done', 'error', 'cancelled')),
  flow_id TEXT,
  step_index INTEGER,
  depth INTEGER NOT NULL DEFAULT 0,
  parent_run_id TEXT,
  requested_by TEXT NOT NULL,
  session_user_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  error TEXT,
  usage_json TEXT,
  started_at INTEGER NOT NULL,
  ended_at INTEGER
) WITHOUT ROWID;
CREATE INDEX team_runs_channel ON team_runs (channel_id, started_at);
CREATE INDEX team_runs_open ON team_runs (status) WHERE status IN ('queued', 'running');

CREATE TABLE team_flows (
  id TEXT PRIMARY KEY,
  channel_id TEXT NOT NULL REFERENCES team_channels (id) ON DELETE CASCADE,
  trigger_message_id INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('idle', 'running', 'paused', 'done', 'error', 'stopped')),
  current_step INTEGER NOT NULL,
  steps_json TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX team_flows_channel ON team_flows (channel_id, created_at);
CREATE INDEX team_flows_status ON team_flows (status);

CREATE TABLE team_meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
`;

/**
 * Who owns an agent or a knowledge base and who sees it (migration 23). NULL owner: made before
 * owners existed, seen by everyone; `allowed_json` lists the people of visibility 'people'.
 */
const VISIBILITY_COLUMNS: ReadonlyArray<readonly [string, string]> = [
  ["owner_id", "TEXT"],
  ["visibility", "TEXT NOT NULL DEFAULT 'everyone' CHECK (visibility IN ('everyone', 'people', 'private'))"],
  ["allowed_json", "TEXT NOT NULL DEFAULT '[]'"],
];

/** Every migration Dimsum knows, oldest first. Append only. */
export const migrations: readonly Migration[] = [
  { version: 1, name: "sessions, messages, runs, run events, todos", up: (db) => db.exec(sessionsSchema) },
  {
    version: 2,
    name: "long-term memory: archival memories, core memory blocks, recall index over messages",
    up: (db) => db.exec(memorySchema + recallSchema),
  },
  {
    version: 3,
    name: "team platform: agents, channels, members, channel messages with search, read markers, runs, flows",
    up: (db) => db.exec(teamSchema),
  },
  {
    version: 4,
    name: "server accounts: users, login sessions, API tokens, server settings and provider keys",
    // Tokens are stored as SHA-256 hex, passwords as scrypt strings, provider keys AES-GCM sealed.
    up: (db) =>
      db.exec(`
CREATE TABLE users (
  id TEXT PRIMARY KEY,
  username TEXT NOT NULL UNIQUE COLLATE NOCASE,
  password_hash TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'guest')),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE auth_sessions (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  token_hash TEXT NOT NULL UNIQUE,
  csrf_token TEXT NOT NULL,
  user_agent TEXT,
  ip TEXT,
  created_at INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX auth_sessions_user ON auth_sessions (user_id, last_seen_at);
CREATE INDEX auth_sessions_expiry ON auth_sessions (expires_at);
CREATE TABLE api_tokens (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  token_hash TEXT NOT NULL UNIQUE,
  preview TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  last_used_at INTEGER
);
CREATE INDEX api_tokens_user ON api_tokens (user_id, created_at);
CREATE TABLE server_settings (
  key TEXT PRIMARY KEY,
  value_json TEXT NOT NULL,
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE provider_settings (
  name TEXT PRIMARY KEY,
  base_url TEXT,
  protocol TEXT NOT NULL CHECK (protocol IN ('openai', 'anthropic', 'gemini')),
  api_key_enc TEXT,
  key_preview TEXT,
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;
`),
  },
  {
    version: 5,
    name: "knowledge base: bases, documents, parent and child chunks with vectors, chunk search index",
    // Child chunks are what search matches (FTS terms written by the app, as for memories; `kb` holds
    // `kbid<N>` so one FTS query can stay inside chosen bases); parents are what the model reads.
    // `kb_bases.version` is bumped by every write so in-memory vector indexes know when to reload.
    up: (db) =>
      db.exec(`
CREATE TABLE kb_bases (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  agent_id TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  version INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (agent_id, name)
);
CREATE TABLE kb_documents (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  kb_id INTEGER NOT NULL REFERENCES kb_bases (id) ON DELETE CASCADE,
  source TEXT NOT NULL,
  title TEXT NOT NULL,
  mime TEXT NOT NULL,
  size INTEGER NOT NULL,
  content_hash TEXT NOT NULL,
  pages INTEGER,
  status TEXT NOT NULL CHECK (status IN ('ready', 'failed')),
  error TEXT,
  parent_count INTEGER NOT NULL DEFAULT 0,
  chunk_count INTEGER NOT NULL DEFAULT 0,
  embedding_model TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (kb_id, source)
);
CREATE TABLE kb_parent_chunks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  document_id INTEGER NOT NULL REFERENCES kb_documents (id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  text TEXT NOT NULL,
  section TEXT,
  page_start INTEGER,
  page_end INTEGER,
  tokens INTEGER NOT NULL
);
CREATE INDEX kb_parent_chunks_document ON kb_parent_chunks (document_id, seq);
CREATE TABLE kb_child_chunks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  parent_id INTEGER NOT NULL REFERENCES kb_parent_chunks (id) ON DELETE CASCADE,
  document_id INTEGER NOT NULL,
  kb_id INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  text TEXT NOT NULL,
  section TEXT,
  page_start INTEGER,
  page_end INTEGER,
  tokens INTEGER NOT NULL,
  embedding BLOB,
  embedding_model TEXT,
  embedding_dims INTEGER
);
CREATE INDEX kb_child_chunks_parent ON kb_child_chunks (parent_id);
CREATE INDEX kb_child_chunks_kb_model ON kb_child_chunks (kb_id, embedding_model);
CREATE VIRTUAL TABLE kb_chunks_fts USING fts5 (terms, kb, tokenize = "unicode61 remove_diacritics 0 categories 'L* N* Co M*'");
CREATE VIRTUAL TABLE kb_chunks_fts_vocab USING fts5vocab (kb_chunks_fts, 'row');
CREATE TRIGGER kb_child_chunks_after_delete AFTER DELETE ON kb_child_chunks BEGIN
  DELETE FROM kb_chunks_fts WHERE rowid = old.id;
END;
`),
  },
  {
    version: 6,
    name: "schedules: cron, one-shot and interval schedules of agents and chains, with their runs",
    // `run_requested_at` lets `dimsum schedule run` ask a running server (which polls) to run one now.
    up: (db) =>
      db.exec(`
CREATE TABLE schedules (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  owner_id TEXT NOT NULL,
  enabled INTEGER NOT NULL DEFAULT 1,
  timing_json TEXT NOT NULL,
  target_json TEXT NOT NULL,
  missed_policy TEXT NOT NULL CHECK (missed_policy IN ('skip', 'run_once')),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  last_run_at INTEGER,
  next_run_at INTEGER,
  run_requested_at INTEGER
) WITHOUT ROWID;
CREATE INDEX schedules_owner ON schedules (owner_id, created_at);
CREATE INDEX schedules_due ON schedules (next_run_at) WHERE enabled = 1 AND next_run_at IS NOT NULL;
CREATE TABLE schedule_runs (
  id TEXT PRIMARY KEY,
  schedule_id TEXT NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
  run_trigger TEXT NOT NULL CHECK (run_trigger IN ('schedule', 'manual', 'missed')),
  scheduled_for INTEGER,
  started_at INTEGER NOT NULL,
  ended_at INTEGER,
  status TEXT NOT NULL CHECK (status IN ('running', 'done', 'error', 'skipped')),
  output TEXT,
  error TEXT,
  team_run_id TEXT,
  flow_id TEXT,
  message_id INTEGER
);
CREATE INDEX schedule_runs_schedule ON schedule_runs (schedule_id, started_at);
CREATE INDEX schedule_runs_running ON schedule_runs (status) WHERE status = 'running';
`),
  },
  {
    version: 7,
    name: "chat connectors: configs with sealed secrets, external users and chats, inbound de-dup, outbox, state",
    // Secrets are AES-GCM sealed JSON. Outbox rows are deleted once delivered; `failed` rows stay for
    // inspection. Mappings vanish with their connector, user or channel.
    up: (db) =>
      db.exec(`
CREATE TABLE connectors (
  id TEXT PRIMARY KEY,
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
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE connector_users (
  connector_id TEXT NOT NULL REFERENCES connectors (id) ON DELETE CASCADE,
  external_user_id TEXT NOT NULL,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  PRIMARY KEY (connector_id, external_user_id)
) WITHOUT ROWID;
CREATE TABLE connector_chats (
  connector_id TEXT NOT NULL REFERENCES connectors (id) ON DELETE CASCADE,
  external_chat_id TEXT NOT NULL,
  channel_id TEXT NOT NULL REFERENCES team_channels (id) ON DELETE CASCADE,
  PRIMARY KEY (connector_id, external_chat_id)
) WITHOUT ROWID;
CREATE INDEX connector_chats_channel ON connector_chats (channel_id);
CREATE TABLE connector_inbound (
  connector_id TEXT NOT NULL REFERENCES connectors (id) ON DELETE CASCADE,
  dedupe_key TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  PRIMARY KEY (connector_id, dedupe_key)
) WITHOUT ROWID;
CREATE INDEX connector_inbound_age ON connector_inbound (received_at);
CREATE TABLE connector_outbox (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  connector_id TEXT NOT NULL REFERENCES connectors (id) ON DELETE CASCADE,
  chat_id TEXT NOT NULL,
  payload_json TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  last_error TEXT,
  created_at INTEGER NOT NULL
);
CREATE INDEX connector_outbox_due ON connector_outbox (connector_id, status, chat_id, id);
CREATE TABLE connector_state (
  connector_id TEXT NOT NULL REFERENCES connectors (id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (connector_id, key)
) WITHOUT ROWID;
`),
  },
  {
    version: 8,
    name: "agents name the knowledge bases they may query (NULL: every base the person may read)",
    up: (db) => db.exec("ALTER TABLE team_agents ADD COLUMN knowledge_bases_json TEXT"),
  },
  {
    version: 9,
    name: "memory and knowledge search: single CJK characters in their own, lower-weighted FTS column; re-index",
    up: splitCjkCharsColumn,
  },
  {
    version: 10,
    name: "channel messages store their parts in order, what they reply to, regenerated versions, edits",
    // Messages from before keep their text as their one part; answers without text get none.
    up: (db) =>
      db.exec(`
ALTER TABLE team_messages ADD COLUMN parts_json TEXT;
ALTER TABLE team_messages ADD COLUMN reply_to INTEGER;
ALTER TABLE team_messages ADD COLUMN version_of INTEGER;
ALTER TABLE team_messages ADD COLUMN edited_at INTEGER;
UPDATE team_messages SET parts_json = CASE WHEN text = '' THEN '[]'
  ELSE json_array(json_object('type', 'text', 'text', text)) END;
UPDATE team_messages SET reply_to = (SELECT r.trigger_message_id FROM team_runs r
  WHERE r.id = team_messages.run_id AND r.flow_id IS NULL AND r.depth = 0 AND r.trigger_message_id > 0)
  WHERE run_id IS NOT NULL;
CREATE INDEX team_messages_reply_to ON team_messages (reply_to) WHERE reply_to IS NOT NULL;
`),
  },
  {
    version: 11,
    name: "several instances: schedule runs' heartbeats, outbox items claimed under a lease, poll leases with fencing tokens",
    // A running schedule run's `heartbeat_at` is renewed by the instance running it; one that stops
    // renewing (its instance died) is ended as interrupted by any instance.
    // `claimed_until` keeps an item another drainer is sending out of everyone else's reach until it
    // settles or the lease runs out; a lease row is kept after release so its token only grows.
    up: (db) =>
      db.exec(`
ALTER TABLE schedule_runs ADD COLUMN heartbeat_at INTEGER;
ALTER TABLE connector_outbox ADD COLUMN claimed_by TEXT;
ALTER TABLE connector_outbox ADD COLUMN claimed_until INTEGER;
CREATE TABLE connector_leases (
  connector_id TEXT PRIMARY KEY REFERENCES connectors (id) ON DELETE CASCADE,
  holder TEXT,
  token INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;
`),
  },
  {
    version: 12,
    name: "run state: checkpoints of session runs, runs waiting for approval, approve-always grants, queue modes, ask-first tools",
    // A session run's checkpoint is its progress between steps; `waiting_since` marks one waiting for
    // a person (recovery leaves it alone). team_runs gains the status `waiting`: SQLite cannot alter a
    // CHECK, so the table is rebuilt (nothing references it) with the same columns and indexes.
    up: (db) =>
      db.exec(`
ALTER TABLE runs ADD COLUMN checkpoint_json TEXT;
ALTER TABLE runs ADD COLUMN waiting_since INTEGER;

CREATE TABLE team_runs_new (
  id TEXT PRIMARY KEY,
  channel_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  trigger_message_id INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'waiting', 'done', 'error', 'cancelled')),
  flow_id TEXT,
  step_index INTEGER,
  depth INTEGER NOT NULL DEFAULT 0,
  parent_run_id TEXT,
  requested_by TEXT NOT NULL,
  session_user_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  error TEXT,
  usage_json TEXT,
  started_at INTEGER NOT NULL,
  ended_at INTEGER
) WITHOUT ROWID;
INSERT INTO team_runs_new (id, channel_id, agent_id, trigger_message_id, status, flow_id, step_index, depth,
  parent_run_id, requested_by, session_user_id, session_id, error, usage_json, started_at, ended_at)
  SELECT id, channel_id, agent_id, trigger_message_id, status, flow_id, step_index, depth, parent_run_id,
    requested_by, session_user_id, session_id, error, usage_json, started_at, ended_at FROM team_runs;
DROP TABLE team_runs;
ALTER TABLE team_runs_new RENAME TO team_runs;
CREATE INDEX team_runs_channel ON team_runs (channel_id, started_at);
CREATE INDEX team_runs_open ON team_runs (status) WHERE status IN ('queued', 'running');
CREATE INDEX team_runs_waiting ON team_runs (started_at) WHERE status = 'waiting';

CREATE TABLE team_approval_grants (
  channel_id TEXT NOT NULL REFERENCES team_channels (id) ON DELETE CASCADE,
  agent_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  granted_by TEXT NOT NULL,
  granted_at INTEGER NOT NULL,
  PRIMARY KEY (channel_id, agent_id, tool)
) WITHOUT ROWID;

ALTER TABLE team_channels ADD COLUMN queue_mode TEXT;
ALTER TABLE team_agents ADD COLUMN ask_first_json TEXT NOT NULL DEFAULT '[]';
`),
  },
  {
    version: 13,
    name: "an agent's answer format (a JSON Schema its answers follow)",
    up: (db) =>
      db.exec(`
ALTER TABLE team_agents ADD COLUMN answer_format_json TEXT;
`),
  },
  {
    version: 14,
    name: "connectors of type dingtalk and wecom",
    // SQLite cannot alter a CHECK, and rebuilding `connectors` would cascade-delete the mappings and
    // outbox that reference it. Widening the CHECK changes no stored row, which is the case SQLite
    // documents editing the schema text for (ALTER TABLE, "making other kinds of table schema
    // changes"): the table's SQL is rewritten and the schema version bumped, in this transaction.
    up: (db) => {
      const before = "CHECK (type IN ('telegram', 'webhook', 'feishu'))";
      const after = "CHECK (type IN ('telegram', 'webhook', 'feishu', 'dingtalk', 'wecom'))";
      const schemaVersion = db.pragma("schema_version", { simple: true }) as number;
      db.unsafeMode(true);
      try {
        db.pragma("writable_schema = ON");
        const changed = db
          .prepare(
            "UPDATE sqlite_master SET sql = replace(sql, ?, ?) WHERE type = 'table' AND name = 'connectors'",
          )
          .run(before, after).changes;
        if (changed !== 1)
          throw new Error("the connectors table's type check is not the one migration 7 made");
        db.pragma(`schema_version = ${schemaVersion + 1}`);
        db.pragma("writable_schema = OFF");
      } finally {
        db.unsafeMode(false);
      }
    },
  },
  {
    version: 15,
    name: "each person's pinned and archived chats",
    up: (db) =>
      db.exec(`
CREATE TABLE team_channel_prefs (
  channel_id TEXT NOT NULL REFERENCES team_channels (id) ON DELETE CASCADE,
  user_id TEXT NOT NULL,
  pinned_at INTEGER,
  archived_at INTEGER,
  PRIMARY KEY (channel_id, user_id)
) WITHOUT ROWID;
CREATE INDEX team_channel_prefs_user ON team_channel_prefs (user_id);
`),
  },
  {
    version: 16,
    name: "an agent's reasoning effort",
    up: (db) => db.exec("ALTER TABLE team_agents ADD COLUMN reasoning TEXT;"),
  },
  {
    version: 17,
    name: "attachments: files of chat messages, stored once by content (sha256), linked to the chats that may read them",
    up: (db) =>
      db.exec(`
CREATE TABLE attachments (
  id TEXT PRIMARY KEY,
  mime_type TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('image', 'pdf', 'text')),
  size INTEGER NOT NULL,
  data BLOB NOT NULL,
  created_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE attachment_links (
  channel_id TEXT NOT NULL REFERENCES team_channels (id) ON DELETE CASCADE,
  attachment_id TEXT NOT NULL REFERENCES attachments (id),
  name TEXT NOT NULL,
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (channel_id, attachment_id)
) WITHOUT ROWID;
CREATE INDEX attachment_links_attachment ON attachment_links (attachment_id);
`),
  },
  {
    version: 18,
    name: "a2a_tasks: the A2A server's tasks (the columns @a2a-js/sdk's DatabaseTaskStore reads and writes)",
    up: (db) =>
      db.exec(`
CREATE TABLE a2a_tasks (
  tenant TEXT NOT NULL COLLATE BINARY,
  owner TEXT NOT NULL COLLATE BINARY,
  id TEXT NOT NULL COLLATE BINARY,
  context_id TEXT NOT NULL COLLATE BINARY,
  status_last_updated INTEGER NOT NULL,
  status_state TEXT COLLATE BINARY,
  status TEXT,
  artifacts TEXT,
  history TEXT,
  metadata TEXT,
  protocol_version TEXT,
  PRIMARY KEY (tenant, owner, id)
);
CREATE INDEX a2a_tasks_scope_updated ON a2a_tasks (tenant, owner, status_last_updated, id);
CREATE INDEX a2a_tasks_scope_context_updated ON a2a_tasks (tenant, owner, context_id, status_last_updated, id);
`),
  },
  {
    version: 19,
    name: "team_app_calls: MCP App tool calls waiting for the person's approval",
    up: (db) =>
      db.exec(`
CREATE TABLE team_app_calls (
  id TEXT PRIMARY KEY,
  actor TEXT NOT NULL,
  channel_id TEXT NOT NULL REFERENCES team_channels (id) ON DELETE CASCADE,
  run_id TEXT NOT NULL,
  call_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  name TEXT NOT NULL,
  args TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX team_app_calls_expiry ON team_app_calls (expires_at);
`),
  },
  {
    version: 20,
    name: "team_meetings: meetings in groups (saved after every statement) and their minutes",
    up: (db) =>
      db.exec(`
CREATE TABLE team_meetings (
  id TEXT PRIMARY KEY,
  channel_id TEXT NOT NULL REFERENCES team_channels (id) ON DELETE CASCADE,
  status TEXT NOT NULL,
  search_text TEXT NOT NULL,
  data TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX team_meetings_channel ON team_meetings (channel_id, created_at);
CREATE INDEX team_meetings_status ON team_meetings (status);
`),
  },
  {
    version: 21,
    name: "audit_log: security-relevant actions, chained by hash, and the chain's head",
    up: (db) =>
      db.exec(`
CREATE TABLE audit_log (
  seq INTEGER PRIMARY KEY,
  at INTEGER NOT NULL,
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
);
CREATE INDEX audit_log_at ON audit_log (at);
CREATE INDEX audit_log_actor ON audit_log (actor_id, seq);
CREATE INDEX audit_log_action ON audit_log (action, seq);
CREATE TABLE audit_head (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  seq INTEGER NOT NULL,
  hash TEXT NOT NULL,
  pruned_seq INTEGER NOT NULL,
  pruned_hash TEXT NOT NULL,
  retention_days INTEGER NOT NULL
);
`),
  },
  {
    version: 22,
    name: "budgets of people, agents and groups, and what was spent against them per period",
    up: (db) =>
      db.exec(`
CREATE TABLE budgets (
  id TEXT PRIMARY KEY,
  scope TEXT NOT NULL CHECK (scope IN ('person', 'agent', 'group')),
  scope_id TEXT NOT NULL,
  period TEXT NOT NULL CHECK (period IN ('day', 'month')),
  unit TEXT NOT NULL CHECK (unit IN ('usd', 'tokens')),
  soft_limit REAL,
  hard_limit REAL,
  cheaper_model TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (scope, scope_id, period, unit)
);
CREATE TABLE budget_counters (
  budget_id TEXT NOT NULL REFERENCES budgets (id) ON DELETE CASCADE,
  period_key TEXT NOT NULL,
  spent REAL NOT NULL,
  reserved REAL NOT NULL,
  last_run REAL NOT NULL,
  PRIMARY KEY (budget_id, period_key)
);
`),
  },
  {
    version: 23,
    name: "owners and visibility of agents and knowledge bases",
    up: (db) => {
      // Idempotent: a column already there (a half-applied copy) is left as it is.
      for (const table of ["team_agents", "kb_bases"]) {
        const have = new Set(
          (db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).map((c) => c.name),
        );
        for (const [column, type] of VISIBILITY_COLUMNS) {
          if (!have.has(column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
        }
      }
    },
  },
  {
    version: 24,
    name: "an agent's sandbox network (off, allow a list of hosts, or on)",
    up: (db) => {
      const columns = db.prepare("PRAGMA table_info(team_agents)").all() as Array<{ name: string }>;
      if (!columns.some((c) => c.name === "network_json")) {
        db.exec("ALTER TABLE team_agents ADD COLUMN network_json TEXT;");
      }
    },
  },
];

/** The schema version recorded in the database file. */
export function schemaVersion(db: Database): number {
  return db.pragma("user_version", { simple: true }) as number;
}

function checkList(list: readonly Migration[]): void {
  list.forEach((m, i) => {
    if (m.version !== i + 1) {
      throw new DimsumError(
        "internal",
        `Migration "${m.name}" has version ${m.version}; expected ${i + 1}.`,
        {
          hint: "migrations are numbered 1, 2, 3, ... in order without gaps",
        },
      );
    }
  });
}

function newerSchemaError(file: string, found: number, known: number): DimsumError {
  return new DimsumError(
    "config",
    `database at ${file} was written by a newer Dimsum (schema ${found} > ${known}); upgrade Dimsum`,
    { hint: "or point DIMSUM_HOME at another folder to start a separate database" },
  );
}

/**
 * Applies pending migrations, each in its own IMMEDIATE transaction that re-reads the version, so
 * two processes opening the same new file at once apply each migration exactly once.
 */
export function runMigrations(db: Database, list: readonly Migration[] = migrations): MigrationReport {
  checkList(list);
  const file = db.name;
  const known = list.length;
  const from = schemaVersion(db);
  if (from > known) throw newerSchemaError(file, from, known);
  const applied: number[] = [];
  for (const migration of list.slice(from)) {
    const apply = db.transaction((): boolean => {
      const current = schemaVersion(db);
      if (current > known) throw newerSchemaError(file, current, known);
      if (current >= migration.version) return false;
      db.exec(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)",
      );
      migration.up(db);
      db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
        migration.version,
        migration.name,
        Date.now(),
      );
      // The pragma is part of the transaction, so a failed migration leaves the version untouched.
      db.pragma(`user_version = ${migration.version}`);
      return true;
    });
    try {
      if (apply.immediate()) applied.push(migration.version);
    } catch (err) {
      if (err instanceof DimsumError || sqliteCode(err)?.startsWith("SQLITE_BUSY")) {
        throw storeError(err, file, `migrate`);
      }
      throw new DimsumError(
        "internal",
        `Migration ${migration.version} (${migration.name}) failed on the database at ${file}: ${
          err instanceof Error ? err.message : String(err)
        }`,
        { hint: "the database was left at the previous schema version; report this as a bug", cause: err },
      );
    }
  }
  return { from, to: schemaVersion(db), applied };
}
