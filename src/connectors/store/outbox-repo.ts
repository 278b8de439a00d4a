/**
 * The outbox: replies waiting to be delivered to a platform. A reply is written here before any
 * attempt, so an outage or a restart loses nothing; a row is deleted once the platform took it.
 * Replies to one chat go out in order: only the oldest pending row of a chat is ever due.
 */
import type { Database } from "better-sqlite3";
import type { OutboundMessage } from "../types.js";

export interface OutboxItem {
  id: number;
  connectorId: string;
  message: OutboundMessage;
  attempts: number;
  nextAttemptAt: number;
  lastError?: string;
}

interface OutboxRow {
  id: number;
  connector_id: string;
  chat_id: string;
  payload_json: string;
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
}

function toItem(row: OutboxRow): OutboxItem {
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

/** The connector_outbox table. */
export class OutboxRepo {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  /** Queues replies (in order, in one transaction). */
  add(connectorId: string, messages: readonly OutboundMessage[], now: number): void {
    const insert = this.#db.prepare(
      `INSERT INTO connector_outbox (connector_id, chat_id, payload_json, next_attempt_at, created_at)
       VALUES (?, ?, ?, ?, ?)`,
    );
    this.#db.transaction(() => {
      for (const { chatId, ...rest } of messages) {
        insert.run(connectorId, chatId, JSON.stringify(rest), now, now);
      }
    })();
  }

  /** The head of each chat's queue, with when it is due, oldest first. */
  heads(connectorId: string): OutboxItem[] {
    const rows = this.#db
      .prepare(
        `SELECT o.* FROM connector_outbox o
         WHERE o.connector_id = ? AND o.status = 'pending'
           AND o.id = (SELECT min(id) FROM connector_outbox
                       WHERE connector_id = o.connector_id AND chat_id = o.chat_id AND status = 'pending')
         ORDER BY o.id`,
      )
      .all(connectorId) as OutboxRow[];
    return rows.map(toItem);
  }

  /** Delivered: forget it. */
  done(id: number): void {
    this.#db.prepare("DELETE FROM connector_outbox WHERE id = ?").run(id);
  }

  /** A failed attempt: try again at `nextAttemptAt`. */
  retryLater(id: number, error: string, nextAttemptAt: number): void {
    this.#db
      .prepare(
        "UPDATE connector_outbox SET attempts = attempts + 1, last_error = ?, next_attempt_at = ? WHERE id = ?",
      )
      .run(error, nextAttemptAt, id);
  }

  /** The platform refused it for good: keep it for inspection, out of the queue. */
  fail(id: number, error: string): void {
    this.#db
      .prepare(
        "UPDATE connector_outbox SET attempts = attempts + 1, last_error = ?, status = 'failed' WHERE id = ?",
      )
      .run(error, id);
  }

  /** Replaces a row's message (e.g. an edit that must become a new message). */
  rewrite(id: number, message: OutboundMessage): void {
    const { chatId: _chatId, ...rest } = message;
    this.#db
      .prepare("UPDATE connector_outbox SET payload_json = ? WHERE id = ?")
      .run(JSON.stringify(rest), id);
  }

  /** Pending and failed counts of a connector. */
  counts(connectorId: string): { pending: number; failed: number } {
    const rows = this.#db
      .prepare("SELECT status, count(*) AS n FROM connector_outbox WHERE connector_id = ? GROUP BY status")
      .all(connectorId) as Array<{ status: string; n: number }>;
    return {
      pending: rows.find((r) => r.status === "pending")?.n ?? 0,
      failed: rows.find((r) => r.status === "failed")?.n ?? 0,
    };
  }

  /** Every row of a connector (tests and inspection). */
  list(connectorId: string): Array<OutboxItem & { status: "pending" | "failed" }> {
    const rows = this.#db
      .prepare("SELECT * FROM connector_outbox WHERE connector_id = ? ORDER BY id")
      .all(connectorId) as Array<OutboxRow & { status: "pending" | "failed" }>;
    return rows.map((row) => ({ ...toItem(row), status: row.status }));
  }
}
