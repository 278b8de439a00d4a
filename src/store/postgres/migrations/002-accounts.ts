/**
 * Server accounts: users, login sessions, API tokens, server settings (which also hold the saved MCP
 * servers and each person's sealed MCP sign-ins) and provider keys. The same columns as SQLite
 * migration 4, so both backends map rows with the same code. Tokens are stored as SHA-256 hex,
 * passwords as scrypt strings, provider keys and MCP secrets AES-GCM sealed; times are epoch ms.
 */
import { sqlMigration } from "../pg-migrations.js";

export const accounts = sqlMigration(2, "server accounts, login sessions, API tokens, settings", [
  `CREATE TABLE users (
    id TEXT PRIMARY KEY,
    username TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'guest')),
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  )`,
  // SQLite's `UNIQUE COLLATE NOCASE`: one account per username whatever its case.
  "CREATE UNIQUE INDEX users_username ON users (lower(username))",
  `CREATE TABLE auth_sessions (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash TEXT NOT NULL UNIQUE,
    csrf_token TEXT NOT NULL,
    user_agent TEXT,
    ip TEXT,
    created_at BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
  )`,
  "CREATE INDEX auth_sessions_user ON auth_sessions (user_id, last_seen_at)",
  "CREATE INDEX auth_sessions_expiry ON auth_sessions (expires_at)",
  `CREATE TABLE api_tokens (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    preview TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    last_used_at BIGINT
  )`,
  "CREATE INDEX api_tokens_user ON api_tokens (user_id, created_at)",
  `CREATE TABLE server_settings (
    key TEXT PRIMARY KEY,
    value_json TEXT NOT NULL,
    updated_at BIGINT NOT NULL
  )`,
  `CREATE TABLE provider_settings (
    name TEXT PRIMARY KEY,
    base_url TEXT,
    protocol TEXT NOT NULL CHECK (protocol IN ('openai', 'anthropic', 'gemini')),
    api_key_enc TEXT,
    key_preview TEXT,
    updated_at BIGINT NOT NULL
  )`,
]);
