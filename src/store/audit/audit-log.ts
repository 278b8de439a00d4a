/**
 * The audit log repository (`audit_log` and its chain head `audit_head`), one logic over SQLite and
 * PostgreSQL. Append only: entries are added under the head's row lock (PostgreSQL: `FOR UPDATE`, so
 * instances writing at once queue on it; SQLite: the file's single writer), each hashed after the one
 * before (audit-chain.ts). Secrets are taken out before anything is written (redact.ts). Retention
 * deletes the oldest entries and moves the chain's start forward, so what remains still verifies.
 */

import { one, run, type SqlDatabase, sql } from "../sql-database.js";
import {
  type AuditRow,
  type ChainHead,
  type ChainProblem,
  ChainVerifier,
  entryHash,
  GENESIS_HASH,
} from "./audit-chain.js";
import { redactSecrets } from "./redact.js";

/** Who did it: an account (id and name), or just the name given (a failed sign-in). */
export interface AuditActor {
  id?: string;
  name?: string;
}

/** Where a request came from. */
export interface AuditOrigin {
  ip?: string;
  userAgent?: string;
}

export interface AuditInput {
  actor?: AuditActor;
  /** Dotted, stable names: `auth.sign_in`, `provider.key_set`, `chat.delete`, … */
  action: string;
  target?: string;
  before?: unknown;
  after?: unknown;
  origin?: AuditOrigin;
}

export interface AuditEntry {
  seq: number;
  at: number;
  actorId: string | null;
  actorName: string | null;
  action: string;
  target: string | null;
  ip: string | null;
  userAgent: string | null;
  instance: string | null;
  before: unknown;
  after: unknown;
  hash: string;
}

export interface AuditQuery {
  /** An account id or name. */
  actor?: string;
  /** An action, or a prefix of dotted actions (`auth` matches `auth.sign_in`). */
  action?: string;
  /** From this time (ms, inclusive). */
  from?: number;
  /** Until this time (ms, exclusive). */
  to?: number;
  /** Older than this entry (paging: the last `seq` of the previous page). */
  beforeSeq?: number;
  /** At most this many (default 100, at most 1000). */
  limit?: number;
}

export interface AuditVerification {
  ok: boolean;
  checked: number;
  /** The entries before this one were removed by retention (0: none). */
  prunedThrough: number;
  problems: ChainProblem[];
}

/** The audit log's retention: entries older than this many days are deleted; 0 keeps them forever. */
export const DEFAULT_AUDIT_RETENTION_DAYS = 365;
const PRUNE_EVERY_MS = 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

const SQL = {
  ensureHead: sql(`INSERT INTO audit_head (id, seq, hash, pruned_seq, pruned_hash, retention_days)
      VALUES (1, 0, '${GENESIS_HASH}', 0, '${GENESIS_HASH}', ${DEFAULT_AUDIT_RETENTION_DAYS}) ON CONFLICT (id) DO NOTHING`),
  lockHead: sql({
    sqlite: "SELECT seq, hash, pruned_seq, pruned_hash, retention_days FROM audit_head WHERE id = 1",
    postgres:
      "SELECT seq, hash, pruned_seq, pruned_hash, retention_days FROM audit_head WHERE id = 1 FOR UPDATE",
  }),
  head: sql("SELECT seq, hash, pruned_seq, pruned_hash, retention_days FROM audit_head WHERE id = 1"),
  insert: sql(`INSERT INTO audit_log (seq, at, actor_id, actor_name, action, target, ip, user_agent, instance,
      before_json, after_json, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
  advance: sql("UPDATE audit_head SET seq = ?, hash = ? WHERE id = 1"),
  list: sql(`SELECT * FROM audit_log WHERE
      (CAST($1 AS TEXT) IS NULL OR actor_id = $1 OR actor_name = $1)
      AND (CAST($2 AS TEXT) IS NULL OR action = $2 OR action LIKE $2 || '.%')
      AND (CAST($3 AS BIGINT) IS NULL OR at >= $3)
      AND (CAST($4 AS BIGINT) IS NULL OR at < $4)
      AND (CAST($5 AS BIGINT) IS NULL OR seq < $5)
      ORDER BY seq DESC LIMIT $6`),
  page: sql("SELECT * FROM audit_log WHERE seq > ? ORDER BY seq LIMIT ?"),
  lastBefore: sql("SELECT seq, hash FROM audit_log WHERE at < ? ORDER BY seq DESC LIMIT 1"),
  prune: sql("DELETE FROM audit_log WHERE seq <= ?"),
  pruned: sql("UPDATE audit_head SET pruned_seq = ?, pruned_hash = ? WHERE id = 1"),
  retention: sql("UPDATE audit_head SET retention_days = ? WHERE id = 1"),
} as const;

const SAVE = "write the audit log in";
const READ = "read the audit log from";

type HeadRow = ChainHead & { retention_days: number };

function json(value: unknown): string | null {
  if (value === undefined) return null;
  return JSON.stringify(redactSecrets(value));
}

function parse(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function clip(text: string | undefined, max: number): string | null {
  return text === undefined || text === "" ? null : text.slice(0, max);
}

export function toAuditEntry(row: AuditRow): AuditEntry {
  return {
    seq: Number(row.seq),
    at: Number(row.at),
    actorId: row.actor_id,
    actorName: row.actor_name,
    action: row.action,
    target: row.target,
    ip: row.ip,
    userAgent: row.user_agent,
    instance: row.instance,
    before: parse(row.before_json),
    after: parse(row.after_json),
    hash: row.hash,
  };
}

export interface AuditLogOptions {
  /** This instance's name, written with every entry. */
  instance?: string;
  now?: () => number;
}

/** The audit log over one database. */
export class AuditLog {
  private readonly now: () => number;
  private lastPrune = 0;

  constructor(
    private readonly db: SqlDatabase,
    private readonly options: AuditLogOptions = {},
  ) {
    this.now = options.now ?? Date.now;
  }

  /** Appends one entry (secrets redacted) and returns it as stored. */
  async record(input: AuditInput): Promise<AuditEntry> {
    const at = this.now();
    const fields = {
      at,
      actor_id: clip(input.actor?.id, 200),
      actor_name: clip(input.actor?.name, 200),
      action: input.action,
      target: clip(input.target, 500),
      ip: clip(input.origin?.ip, 100),
      user_agent: clip(input.origin?.userAgent, 500),
      instance: clip(this.options.instance, 200),
      before_json: json(input.before),
      after_json: json(input.after),
    };
    const row = await this.db.transaction(SAVE, function* () {
      yield* run(SQL.ensureHead);
      const head = yield* one<HeadRow>(SQL.lockHead);
      const prev = head ? { seq: Number(head.seq), hash: head.hash } : { seq: 0, hash: GENESIS_HASH };
      const entry = { ...fields, seq: prev.seq + 1 };
      const hash = entryHash(prev.hash, entry);
      yield* run(SQL.insert, [
        entry.seq,
        entry.at,
        entry.actor_id,
        entry.actor_name,
        entry.action,
        entry.target,
        entry.ip,
        entry.user_agent,
        entry.instance,
        entry.before_json,
        entry.after_json,
        prev.hash,
        hash,
      ]);
      yield* run(SQL.advance, [entry.seq, hash]);
      return { ...entry, prev_hash: prev.hash, hash } satisfies AuditRow;
    });
    if (at - this.lastPrune >= PRUNE_EVERY_MS) {
      this.lastPrune = at;
      await this.prune();
    }
    return toAuditEntry(row);
  }

  /** Entries matching `query`, newest first. */
  async list(query: AuditQuery = {}): Promise<AuditEntry[]> {
    const limit = Math.max(1, Math.min(query.limit ?? 100, 1000));
    const rows = await this.db.many<AuditRow>(READ, SQL.list, [
      query.actor ?? null,
      query.action ?? null,
      query.from ?? null,
      query.to ?? null,
      query.beforeSeq ?? null,
      limit,
    ]);
    return rows.map(toAuditEntry);
  }

  /** Every entry matching `query`, newest first, a page at a time (for exports). */
  async *all(query: Omit<AuditQuery, "limit" | "beforeSeq"> = {}): AsyncGenerator<AuditEntry> {
    let beforeSeq: number | undefined;
    for (;;) {
      const page = await this.list({ ...query, ...(beforeSeq ? { beforeSeq } : {}), limit: 1000 });
      yield* page;
      const last = page.at(-1);
      if (page.length < 1000 || !last) return;
      beforeSeq = last.seq;
    }
  }

  /** Checks every stored entry against the chain: edited, deleted or relinked entries are reported. */
  async verify(): Promise<AuditVerification> {
    const head = (await this.db.one<HeadRow>(READ, SQL.head)) ?? {
      seq: 0,
      hash: GENESIS_HASH,
      pruned_seq: 0,
      pruned_hash: GENESIS_HASH,
    };
    const verifier = new ChainVerifier(head);
    let after = Number(head.pruned_seq);
    for (;;) {
      const page = await this.db.many<AuditRow>(READ, SQL.page, [after, 1000]);
      verifier.check(page);
      const last = page.at(-1);
      if (page.length < 1000 || !last) break;
      after = Number(last.seq);
    }
    return { ...verifier.finish(), prunedThrough: Number(head.pruned_seq) };
  }

  /** Days entries are kept (0: forever). */
  async retentionDays(): Promise<number> {
    const head = await this.db.one<HeadRow>(READ, SQL.head);
    return head ? Number(head.retention_days) : DEFAULT_AUDIT_RETENTION_DAYS;
  }

  /** Sets the retention (0 keeps entries forever) and deletes what is now past it. */
  async setRetentionDays(days: number): Promise<void> {
    await this.db.transaction(SAVE, function* () {
      yield* run(SQL.ensureHead);
      yield* run(SQL.retention, [days]);
    });
    await this.prune();
  }

  /** Deletes the entries past the retention, moving the chain's start to the first one kept. */
  async prune(): Promise<number> {
    const now = this.now();
    return this.db.transaction(SAVE, function* () {
      const head = yield* one<HeadRow>(SQL.lockHead);
      const days = head ? Number(head.retention_days) : 0;
      if (!head || days <= 0) return 0;
      const last = yield* one<{ seq: number; hash: string }>(SQL.lastBefore, [now - days * DAY_MS]);
      if (!last) return 0;
      const deleted = yield* run(SQL.prune, [Number(last.seq)]);
      yield* run(SQL.pruned, [Number(last.seq), last.hash]);
      return deleted;
    });
  }
}
