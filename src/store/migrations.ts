/**
 * Numbered schema migrations. `PRAGMA user_version` holds the applied version (cheap to read on every
 * open); `schema_migrations` keeps a readable record. Later features (memory, knowledge base) append
 * new entries to `migrations`; an applied migration is never edited.
 */
import type { Database } from "better-sqlite3";
import { DimsumError } from "../errors.js";
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

/** Every migration Dimsum knows, oldest first. Append only. */
export const migrations: readonly Migration[] = [
  { version: 1, name: "sessions, messages, runs, run events, todos", up: (db) => db.exec(sessionsSchema) },
  {
    version: 2,
    name: "long-term memory: archival memories, core memory blocks, recall index over messages",
    up: (db) => db.exec(memorySchema + recallSchema),
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
