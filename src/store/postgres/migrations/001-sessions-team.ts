/**
 * Sessions (messages, runs with their traces, todos) and the team (agents, channels with members,
 * channel messages with their search vector, read markers, runs with their leases, flows, settings). The same columns as
 * the SQLite schema, so both backends map rows with the same code; times are epoch milliseconds.
 */
import { sqlMigration } from "../pg-migrations.js";

export const sessionsAndTeam = sqlMigration(1, "sessions and the team", [
  `CREATE TABLE sessions (
    id BIGSERIAL PRIMARY KEY,
    user_id TEXT NOT NULL,
    session_key TEXT NOT NULL,
    title TEXT,
    summary TEXT,
    summary_updated_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (user_id, session_key)
  )`,
  "CREATE INDEX sessions_user_updated ON sessions (user_id, updated_at)",
  `CREATE TABLE messages (
    id BIGSERIAL PRIMARY KEY,
    session_id BIGINT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    run_id TEXT,
    seq INTEGER NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    content_json TEXT NOT NULL,
    tool_call_id TEXT,
    tool_name TEXT,
    is_error INTEGER,
    created_at BIGINT NOT NULL,
    tokens_estimate INTEGER,
    compacted INTEGER NOT NULL DEFAULT 0,
    UNIQUE (session_id, seq)
  )`,
  "CREATE INDEX messages_session ON messages (session_id, id)",
  "CREATE INDEX messages_session_live ON messages (session_id, id) WHERE compacted = 0",
  `CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    session_id BIGINT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    status TEXT NOT NULL CHECK (status IN ('running', 'done', 'error', 'cancelled', 'interrupted')),
    model TEXT NOT NULL,
    prompt TEXT,
    started_at BIGINT NOT NULL,
    ended_at BIGINT,
    iterations INTEGER NOT NULL DEFAULT 0,
    usage_json TEXT,
    error TEXT,
    note TEXT,
    seq BIGSERIAL
  )`,
  "CREATE INDEX runs_session ON runs (session_id, started_at)",
  "CREATE INDEX runs_running ON runs (session_id) WHERE status = 'running'",
  `CREATE TABLE run_events (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    payload_json TEXT NOT NULL,
    at BIGINT NOT NULL,
    PRIMARY KEY (run_id, seq)
  )`,
  `CREATE TABLE todos (
    session_id BIGINT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    items_json TEXT NOT NULL,
    updated_at BIGINT NOT NULL
  )`,
  `CREATE TABLE team_agents (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    emoji TEXT NOT NULL DEFAULT '',
    model TEXT,
    tools_allow_json TEXT,
    tools_deny_json TEXT NOT NULL DEFAULT '[]',
    memory INTEGER NOT NULL DEFAULT 1,
    skills_json TEXT NOT NULL DEFAULT '[]',
    knowledge_bases_json TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    seq BIGSERIAL
  )`,
  `CREATE TABLE team_channels (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('direct', 'group')),
    name TEXT NOT NULL,
    leader_agent_id TEXT,
    chain_json TEXT NOT NULL DEFAULT '[]',
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    seq BIGSERIAL
  )`,
  `CREATE TABLE team_channel_members (
    channel_id TEXT NOT NULL REFERENCES team_channels (id) ON DELETE CASCADE,
    member_type TEXT NOT NULL CHECK (member_type IN ('user', 'agent')),
    member_id TEXT NOT NULL,
    added_at BIGINT NOT NULL,
    PRIMARY KEY (channel_id, member_type, member_id)
  )`,
  "CREATE INDEX team_channel_members_member ON team_channel_members (member_type, member_id, channel_id)",
  // search_terms: the processed words and CJK bigrams of src/team/search-text.ts, as lexemes.
  `CREATE TABLE team_messages (
    id BIGSERIAL PRIMARY KEY,
    channel_id TEXT NOT NULL REFERENCES team_channels (id) ON DELETE CASCADE,
    author_type TEXT NOT NULL CHECK (author_type IN ('user', 'agent', 'system')),
    author_id TEXT NOT NULL,
    text TEXT NOT NULL,
    run_id TEXT,
    mentions_json TEXT NOT NULL DEFAULT '[]',
    created_at BIGINT NOT NULL,
    parts_json TEXT,
    reply_to BIGINT,
    version_of BIGINT,
    edited_at BIGINT,
    search_terms TSVECTOR NOT NULL DEFAULT ''::tsvector
  )`,
  "CREATE INDEX team_messages_channel ON team_messages (channel_id, id)",
  "CREATE INDEX team_messages_run ON team_messages (run_id, id) WHERE run_id IS NOT NULL",
  "CREATE INDEX team_messages_reply ON team_messages (reply_to, id) WHERE reply_to IS NOT NULL",
  "CREATE INDEX team_messages_search ON team_messages USING GIN (search_terms)",
  `CREATE TABLE team_read_markers (
    reader_id TEXT NOT NULL,
    channel_id TEXT NOT NULL REFERENCES team_channels (id) ON DELETE CASCADE,
    message_id BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (reader_id, channel_id)
  )`,
  `CREATE TABLE team_runs (
    id TEXT PRIMARY KEY,
    channel_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    trigger_message_id BIGINT NOT NULL,
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
    started_at BIGINT NOT NULL,
    ended_at BIGINT,
    lease_owner TEXT,
    lease_until BIGINT,
    fence INTEGER NOT NULL DEFAULT 0
  )`,
  "CREATE INDEX team_runs_channel ON team_runs (channel_id, started_at)",
  "CREATE INDEX team_runs_open ON team_runs (status) WHERE status IN ('queued', 'running')",
  `CREATE TABLE team_flows (
    id TEXT PRIMARY KEY,
    channel_id TEXT NOT NULL REFERENCES team_channels (id) ON DELETE CASCADE,
    trigger_message_id BIGINT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('idle', 'running', 'paused', 'done', 'error', 'stopped')),
    current_step INTEGER NOT NULL,
    steps_json TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  )`,
  "CREATE INDEX team_flows_channel ON team_flows (channel_id, created_at)",
  "CREATE INDEX team_flows_status ON team_flows (status)",
  "CREATE TABLE team_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
  // Personas (SOUL.md) live here rather than in files, so every instance reads the same one.
  "CREATE TABLE team_personas (agent_id TEXT PRIMARY KEY, content TEXT NOT NULL, updated_at BIGINT NOT NULL)",
]);
