/**
 * The outbox: replies waiting to be delivered to a platform. A reply is written here before any
 * attempt, so an outage or a restart loses nothing; a row is deleted once the platform took it.
 * Replies to one chat go out in order: only the oldest pending row of a chat is ever due.
 *
 * Several instances (or workers) may drain one connector's outbox: a drainer `claim`s the due heads
 * under a lease (`claimed_by`, `claimed_until`) in one atomic statement, so each item is handed to one
 * drainer at a time; settling it (`done`, `retryLater`, `fail`, `rewrite`) ends the claim. A claim
 * whose drainer died runs out and the item is due again. The repository interface, the row mapping
 * both backends share and the SQLite implementation (PostgreSQL: `pg-connector-store.ts`).
 */
import type { Database } from "better-sqlite3";
import { cachedStatement } from "../../store/statement-cache.js";
import type { OutboundMessage } from "../types.js";
import { sqliteCall } from "./connector-repo.js";

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

const HEAD = `o.connector_id = ? AND o.status = 'pending'
      AND o.id = (SELECT min(id) FROM connector_outbox
                  WHERE connector_id = o.connector_id AND chat_id = o.chat_id AND status = 'pending')`;

const SQL = {
  add: `INSERT INTO connector_outbox (connector_id, chat_id, payload_json, next_attempt_at, created_at)
      VALUES (?, ?, ?, ?, ?)`,
  heads: `SELECT o.* FROM connector_outbox o WHERE ${HEAD} ORDER BY o.id`,
  // One statement, so it is atomic against every other connection's claim.
  claim: `UPDATE connector_outbox SET claimed_by = ?, claimed_until = ?
      WHERE id IN (SELECT o.id FROM connector_outbox o WHERE ${HEAD})
        AND next_attempt_at <= ? AND (claimed_until IS NULL OR claimed_until <= ?)
      RETURNING *`,
  nextDue: `SELECT min(max(o.next_attempt_at, coalesce(o.claimed_until, 0))) AS t
      FROM connector_outbox o WHERE ${HEAD}`,
  done: "DELETE FROM connector_outbox WHERE id = ?",
  retryLater: `UPDATE connector_outbox SET attempts = attempts + 1, last_error = ?, next_attempt_at = ?,
      claimed_by = NULL, claimed_until = NULL WHERE id = ? AND claimed_by = ?`,
  fail: `UPDATE connector_outbox SET attempts = attempts + 1, last_error = ?, status = 'failed',
      claimed_by = NULL, claimed_until = NULL WHERE id = ? AND claimed_by = ?`,
  rewrite: `UPDATE connector_outbox SET payload_json = ?, claimed_by = NULL, claimed_until = NULL
      WHERE id = ? AND claimed_by = ?`,
  unclaim:
    "UPDATE connector_outbox SET claimed_by = NULL, claimed_until = NULL WHERE id = ? AND claimed_by = ?",
  unclaimAll:
    "UPDATE connector_outbox SET claimed_by = NULL, claimed_until = NULL WHERE connector_id = ? AND claimed_by = ?",
  counts: "SELECT status, count(*) AS n FROM connector_outbox WHERE connector_id = ? GROUP BY status",
  list: "SELECT * FROM connector_outbox WHERE connector_id = ? ORDER BY id",
} as const;

/** The outbox on SQLite. */
export class SqliteOutboxRepo implements OutboxRepo {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  #write(sql: string, ...params: unknown[]): Promise<number> {
    return sqliteCall(
      this.#db,
      "save the connector outbox in",
      () => cachedStatement(this.#db, sql).run(...params).changes,
    );
  }

  #all<T>(sql: string, ...params: unknown[]): Promise<T[]> {
    return sqliteCall(
      this.#db,
      "read the connector outbox from",
      () => cachedStatement(this.#db, sql).all(...params) as T[],
    );
  }

  add(connectorId: string, messages: readonly OutboundMessage[], now: number): Promise<void> {
    return sqliteCall(this.#db, "save the connector outbox in", () => {
      const insert = cachedStatement(this.#db, SQL.add);
      this.#db.transaction(() => {
        for (const message of messages) insert.run(connectorId, message.chatId, payloadOf(message), now, now);
      })();
    });
  }

  async heads(connectorId: string): Promise<OutboxItem[]> {
    return (await this.#all<OutboxRow>(SQL.heads, connectorId)).map(toItem);
  }

  claim(connectorId: string, holder: string, now: number, leaseMs: number): Promise<OutboxItem[]> {
    return sqliteCall(this.#db, "save the connector outbox in", () =>
      (cachedStatement(this.#db, SQL.claim).all(holder, now + leaseMs, connectorId, now, now) as OutboxRow[])
        .sort((a, b) => a.id - b.id)
        .map(toItem),
    );
  }

  async nextDue(connectorId: string): Promise<number | undefined> {
    return (await this.#all<{ t: number | null }>(SQL.nextDue, connectorId))[0]?.t ?? undefined;
  }

  async done(id: number): Promise<void> {
    await this.#write(SQL.done, id);
  }

  async retryLater(id: number, holder: string, error: string, nextAttemptAt: number): Promise<boolean> {
    return (await this.#write(SQL.retryLater, error, nextAttemptAt, id, holder)) > 0;
  }

  async fail(id: number, holder: string, error: string): Promise<boolean> {
    return (await this.#write(SQL.fail, error, id, holder)) > 0;
  }

  async rewrite(id: number, holder: string, message: OutboundMessage): Promise<boolean> {
    return (await this.#write(SQL.rewrite, payloadOf(message), id, holder)) > 0;
  }

  async unclaim(id: number, holder: string): Promise<boolean> {
    return (await this.#write(SQL.unclaim, id, holder)) > 0;
  }

  unclaimAll(connectorId: string, holder: string): Promise<number> {
    return this.#write(SQL.unclaimAll, connectorId, holder);
  }

  async counts(connectorId: string): Promise<{ pending: number; failed: number }> {
    return countsOf(await this.#all<{ status: string; n: number }>(SQL.counts, connectorId));
  }

  async list(connectorId: string): Promise<Array<OutboxItem & { status: "pending" | "failed" }>> {
    return (await this.#all<OutboxRow>(SQL.list, connectorId)).map((row) => ({
      ...toItem(row),
      status: row.status,
    }));
  }
}
