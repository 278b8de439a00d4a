/**
 * The outbox: replies waiting to be delivered to a platform. A reply is written here before any
 * attempt, so an outage or a restart loses nothing; a row is deleted once the platform took it.
 * Replies to one chat go out in order: only the oldest pending row of a chat is ever due.
 *
 * Several instances (or workers) may drain one connector's outbox: a drainer `claim`s the due heads
 * under a lease (`claimed_by`, `claimed_until`) in one atomic statement, so each item is handed to one
 * drainer at a time; settling it (`done`, `retryLater`, `fail`, `rewrite`) ends the claim. A claim
 * whose drainer died runs out and the item is due again. The repository interface, its row mapping
 * and its one implementation over SQLite and PostgreSQL.
 */
import { run, type SqlDatabase, sql } from "../../store/sql-database.js";
import type { OutboundMessage } from "../types.js";

export interface OutboxItem {
  id: number;
  connectorId: string;
  message: OutboundMessage;
  attempts: number;
  nextAttemptAt: number;
  lastError?: string;
}

export interface OutboxRow {
  id: number;
  connector_id: string;
  chat_id: string;
  payload_json: string;
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  status: "pending" | "failed";
}

export function toItem(row: OutboxRow): OutboxItem {
  const item: OutboxItem = {
    id: row.id,
    connectorId: row.connector_id,
    message: { ...(JSON.parse(row.payload_json) as OutboundMessage), chatId: row.chat_id },
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
  };
  if (row.last_error !== null) item.lastError = row.last_error;
  return item;
}

/** The stored payload of a message (its chat has a column of its own). */
export function payloadOf(message: OutboundMessage): string {
  const { chatId: _chatId, ...rest } = message;
  return JSON.stringify(rest);
}

/** Pending and failed counts from `status, n` rows. */
export function countsOf(rows: ReadonlyArray<{ status: string; n: number }>): {
  pending: number;
  failed: number;
} {
  return {
    pending: rows.find((r) => r.status === "pending")?.n ?? 0,
    failed: rows.find((r) => r.status === "failed")?.n ?? 0,
  };
}

/** The connector_outbox table. */
export interface OutboxRepo {
  /** Queues replies (in order, in one transaction). */
  add(connectorId: string, messages: readonly OutboundMessage[], now: number): Promise<void>;
  /** The head of each chat's queue, with when it is due, oldest first (claimed or not). */
  heads(connectorId: string): Promise<OutboxItem[]>;
  /**
   * Claims for `holder`, until `now + leaseMs`, every chat's head that is due and not claimed by
   * anyone (or whose claim ran out); oldest first. Atomic across instances: an item is claimed by
   * one holder at a time, so each is sent by one drainer.
   */
  claim(connectorId: string, holder: string, now: number, leaseMs: number): Promise<OutboxItem[]>;
  /**
   * When a head next becomes claimable: its next attempt, or the end of a claim on it; undefined
   * when nothing is pending.
   */
  nextDue(connectorId: string): Promise<number | undefined>;
  /** Delivered: forget it. */
  done(id: number): Promise<void>;
  /** A failed attempt of `holder`'s claim: try again at `nextAttemptAt`; false when the claim was lost. */
  retryLater(id: number, holder: string, error: string, nextAttemptAt: number): Promise<boolean>;
  /** The platform refused it for good: keep it for inspection, out of the queue; false when the claim was lost. */
  fail(id: number, holder: string, error: string): Promise<boolean>;
  /** Replaces a claimed row's message (an edit that must become a new message) and ends the claim. */
  rewrite(id: number, holder: string, message: OutboundMessage): Promise<boolean>;
  /** Ends `holder`'s claim without an attempt (its send was cut off), so the item is due again at once. */
  unclaim(id: number, holder: string): Promise<boolean>;
  /**
   * Ends every claim `holder` has on the connector's items (a worker starting under a name its
   * crashed predecessor used takes their items back at once); returns how many.
   */
  unclaimAll(connectorId: string, holder: string): Promise<number>;
  /** Pending and failed counts of a connector. */
  counts(connectorId: string): Promise<{ pending: number; failed: number }>;
  /** Every row of a connector, oldest first (tests and inspection). */
  list(connectorId: string): Promise<Array<OutboxItem & { status: "pending" | "failed" }>>;
}

// A chat's head is its oldest pending item. SQLite finds it per row; PostgreSQL groups, and claims
// with FOR UPDATE SKIP LOCKED: rows another drainer is claiming right now are skipped, not waited
// for, and the outer conditions are re-checked on the locked row, so a claim that committed
// meanwhile is never taken twice. Values: $1 connector, $2 holder, $3 now, $4 claim's end.
const HEAD = `o.connector_id = $1 AND o.status = 'pending'
      AND o.id = (SELECT min(id) FROM connector_outbox
                  WHERE connector_id = o.connector_id AND chat_id = o.chat_id AND status = 'pending')`;
const HEADS = `SELECT min(id) FROM connector_outbox WHERE connector_id = $1 AND status = 'pending' GROUP BY chat_id`;
const CLAIMABLE = "next_attempt_at <= $3 AND (claimed_until IS NULL OR claimed_until <= $3)";

const SQL = {
  add: sql(`INSERT INTO connector_outbox (connector_id, chat_id, payload_json, next_attempt_at, created_at)
      VALUES ($1, $2, $3, $4, $4)`),
  heads: sql({
    sqlite: `SELECT o.* FROM connector_outbox o WHERE ${HEAD} ORDER BY o.id`,
    postgres: `SELECT * FROM connector_outbox WHERE id IN (${HEADS}) ORDER BY id`,
  }),
  // One statement, so it is atomic against every other connection's claim.
  claim: sql({
    sqlite: `UPDATE connector_outbox SET claimed_by = $2, claimed_until = $4
      WHERE id IN (SELECT o.id FROM connector_outbox o WHERE ${HEAD}) AND ${CLAIMABLE}
      RETURNING *`,
    postgres: `UPDATE connector_outbox SET claimed_by = $2, claimed_until = $4
      WHERE id IN (SELECT id FROM connector_outbox WHERE id IN (${HEADS}) AND ${CLAIMABLE}
                   FOR UPDATE SKIP LOCKED)
        AND status = 'pending' AND ${CLAIMABLE}
      RETURNING *`,
  }),
  nextDue: sql({
    sqlite: `SELECT min(max(o.next_attempt_at, coalesce(o.claimed_until, 0))) AS t
      FROM connector_outbox o WHERE ${HEAD}`,
    postgres: `SELECT min(greatest(next_attempt_at, coalesce(claimed_until, 0))) AS t
      FROM connector_outbox WHERE id IN (${HEADS})`,
  }),
  done: sql("DELETE FROM connector_outbox WHERE id = ?"),
  retryLater: sql(`UPDATE connector_outbox SET attempts = attempts + 1, last_error = ?, next_attempt_at = ?,
      claimed_by = NULL, claimed_until = NULL WHERE id = ? AND claimed_by = ?`),
  fail: sql(`UPDATE connector_outbox SET attempts = attempts + 1, last_error = ?, status = 'failed',
      claimed_by = NULL, claimed_until = NULL WHERE id = ? AND claimed_by = ?`),
  rewrite: sql(`UPDATE connector_outbox SET payload_json = ?, claimed_by = NULL, claimed_until = NULL
      WHERE id = ? AND claimed_by = ?`),
  unclaim: sql(
    "UPDATE connector_outbox SET claimed_by = NULL, claimed_until = NULL WHERE id = ? AND claimed_by = ?",
  ),
  unclaimAll: sql(
    "UPDATE connector_outbox SET claimed_by = NULL, claimed_until = NULL WHERE connector_id = ? AND claimed_by = ?",
  ),
  counts: sql({
    sqlite: "SELECT status, count(*) AS n FROM connector_outbox WHERE connector_id = ? GROUP BY status",
    postgres:
      "SELECT status, count(*)::int AS n FROM connector_outbox WHERE connector_id = ? GROUP BY status",
  }),
  list: sql("SELECT * FROM connector_outbox WHERE connector_id = ? ORDER BY id"),
} as const;

const SAVE = "save the connector outbox in";
const READ = "read the connector outbox from";

/** The outbox, one logic over either database. */
export class OutboxRepository implements OutboxRepo {
  constructor(private readonly db: SqlDatabase) {}

  async add(connectorId: string, messages: readonly OutboundMessage[], now: number): Promise<void> {
    if (messages.length === 0) return;
    await this.db.transaction(SAVE, function* () {
      for (const message of messages)
        yield* run(SQL.add, [connectorId, message.chatId, payloadOf(message), now]);
    });
  }

  async heads(connectorId: string): Promise<OutboxItem[]> {
    return (await this.db.many<OutboxRow>(READ, SQL.heads, [connectorId])).map(toItem);
  }

  async claim(connectorId: string, holder: string, now: number, leaseMs: number): Promise<OutboxItem[]> {
    const rows = await this.db.many<OutboxRow>(SAVE, SQL.claim, [connectorId, holder, now, now + leaseMs]);
    return rows.sort((a, b) => a.id - b.id).map(toItem);
  }

  async nextDue(connectorId: string): Promise<number | undefined> {
    return (await this.db.one<{ t: number | null }>(READ, SQL.nextDue, [connectorId]))?.t ?? undefined;
  }

  async done(id: number): Promise<void> {
    await this.db.run(SAVE, SQL.done, [id]);
  }

  async retryLater(id: number, holder: string, error: string, nextAttemptAt: number): Promise<boolean> {
    return (await this.db.run(SAVE, SQL.retryLater, [error, nextAttemptAt, id, holder])) > 0;
  }

  async fail(id: number, holder: string, error: string): Promise<boolean> {
    return (await this.db.run(SAVE, SQL.fail, [error, id, holder])) > 0;
  }

  async rewrite(id: number, holder: string, message: OutboundMessage): Promise<boolean> {
    return (await this.db.run(SAVE, SQL.rewrite, [payloadOf(message), id, holder])) > 0;
  }

  async unclaim(id: number, holder: string): Promise<boolean> {
    return (await this.db.run(SAVE, SQL.unclaim, [id, holder])) > 0;
  }

  unclaimAll(connectorId: string, holder: string): Promise<number> {
    return this.db.run(SAVE, SQL.unclaimAll, [connectorId, holder]);
  }

  async counts(connectorId: string): Promise<{ pending: number; failed: number }> {
    return countsOf(await this.db.many<{ status: string; n: number }>(READ, SQL.counts, [connectorId]));
  }

  async list(connectorId: string): Promise<Array<OutboxItem & { status: "pending" | "failed" }>> {
    return (await this.db.many<OutboxRow>(READ, SQL.list, [connectorId])).map((row) => ({
      ...toItem(row),
      status: row.status,
    }));
  }
}
