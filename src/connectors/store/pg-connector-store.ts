/**
 * The connectors' repositories on PostgreSQL (migration 5), for several instances sharing one
 * database: inbound de-dup keys are taken with a unique key, outbox items are claimed with
 * `FOR UPDATE SKIP LOCKED` plus a lease column, poll leases are taken with one upsert. Rows map
 * through the same code as SQLite's.
 */
import type { PgDatabase } from "../../store/postgres/pg-database.js";
import type { ConnectorRecord, ConnectorSecrets, DriverState, OutboundMessage } from "../types.js";
import {
  type ConnectorRepo,
  type ConnectorRow,
  connectorValues,
  type Sealer,
  type StoredConnector,
  saveConnectorSql,
  toStored,
} from "./connector-repo.js";
import { LEASE_SQL, type Lease, type LeaseRepo, type LeaseRow, toLease, toLeaseState } from "./lease-repo.js";
import { DEDUPE_RETENTION_MS, type MappingRepo } from "./mapping-repo.js";
import {
  countsOf,
  type OutboxItem,
  type OutboxRepo,
  type OutboxRow,
  payloadOf,
  toItem,
} from "./outbox-repo.js";

/** The connectors table on PostgreSQL. */
export class PostgresConnectorRepo implements ConnectorRepo {
  readonly #db: PgDatabase;
  readonly #box: Sealer;

  constructor(db: PgDatabase, box: Sealer) {
    this.#db = db;
    this.#box = box;
  }

  async list(): Promise<StoredConnector[]> {
    const rows = await this.#db.many<ConnectorRow>("SELECT * FROM connectors ORDER BY created_at, id");
    return rows.map((row) => toStored(row, this.#box));
  }

  async record(id: string): Promise<ConnectorRecord | undefined> {
    const row = await this.#db.one<ConnectorRow>("SELECT * FROM connectors WHERE id = $1", [id]);
    return row ? toStored({ ...row, secrets_enc: null }, this.#box).record : undefined;
  }

  async get(id: string): Promise<StoredConnector | undefined> {
    const row = await this.#db.one<ConnectorRow>("SELECT * FROM connectors WHERE id = $1", [id]);
    return row ? toStored(row, this.#box) : undefined;
  }

  async save(record: ConnectorRecord, secrets: ConnectorSecrets): Promise<void> {
    const slots = Array.from({ length: 13 }, (_, i) => `$${i + 1}`).join(", ");
    await this.#db.run(saveConnectorSql(slots), connectorValues(record, secrets, this.#box));
  }

  async setEnabled(id: string, enabled: boolean, now: number): Promise<void> {
    await this.#db.run("UPDATE connectors SET enabled = $1, updated_at = $2 WHERE id = $3", [
      enabled ? 1 : 0,
      now,
      id,
    ]);
  }

  async delete(id: string): Promise<boolean> {
    return (await this.#db.run("DELETE FROM connectors WHERE id = $1", [id])) > 0;
  }
}

/** The mapping tables on PostgreSQL. */
export class PostgresMappingRepo implements MappingRepo {
  readonly #db: PgDatabase;

  constructor(db: PgDatabase) {
    this.#db = db;
  }

  async userFor(connectorId: string, externalUserId: string): Promise<string | undefined> {
    const row = await this.#db.one<{ user_id: string }>(
      "SELECT user_id FROM connector_users WHERE connector_id = $1 AND external_user_id = $2",
      [connectorId, externalUserId],
    );
    return row?.user_id;
  }

  async setUser(connectorId: string, externalUserId: string, userId: string): Promise<void> {
    await this.#db.run(
      `INSERT INTO connector_users (connector_id, external_user_id, user_id) VALUES ($1, $2, $3)
       ON CONFLICT (connector_id, external_user_id) DO UPDATE SET user_id = excluded.user_id`,
      [connectorId, externalUserId, userId],
    );
  }

  async channelFor(connectorId: string, externalChatId: string): Promise<string | undefined> {
    const row = await this.#db.one<{ channel_id: string }>(
      "SELECT channel_id FROM connector_chats WHERE connector_id = $1 AND external_chat_id = $2",
      [connectorId, externalChatId],
    );
    return row?.channel_id;
  }

  async setChannel(connectorId: string, externalChatId: string, channelId: string): Promise<void> {
    await this.#db.run(
      `INSERT INTO connector_chats (connector_id, external_chat_id, channel_id) VALUES ($1, $2, $3)
       ON CONFLICT (connector_id, external_chat_id) DO UPDATE SET channel_id = excluded.channel_id`,
      [connectorId, externalChatId, channelId],
    );
  }

  async chatOf(channelId: string): Promise<{ connectorId: string; chatId: string } | undefined> {
    const row = await this.#db.one<{ connector_id: string; external_chat_id: string }>(
      "SELECT connector_id, external_chat_id FROM connector_chats WHERE channel_id = $1 LIMIT 1",
      [channelId],
    );
    return row ? { connectorId: row.connector_id, chatId: row.external_chat_id } : undefined;
  }

  async claim(connectorId: string, key: string, now: number): Promise<boolean> {
    const taken = await this.#db.run(
      `INSERT INTO connector_inbound (connector_id, dedupe_key, received_at) VALUES ($1, $2, $3)
       ON CONFLICT DO NOTHING`,
      [connectorId, key, now],
    );
    if (taken === 0) return false;
    await this.#db.run("DELETE FROM connector_inbound WHERE received_at < $1", [now - DEDUPE_RETENTION_MS]);
    return true;
  }

  async release(connectorId: string, key: string): Promise<void> {
    await this.#db.run("DELETE FROM connector_inbound WHERE connector_id = $1 AND dedupe_key = $2", [
      connectorId,
      key,
    ]);
  }

  stateOf(connectorId: string): DriverState {
    const db = this.#db;
    return {
      async get(key) {
        const row = await db.one<{ value: string }>(
          "SELECT value FROM connector_state WHERE connector_id = $1 AND key = $2",
          [connectorId, key],
        );
        return row?.value;
      },
      async set(key, value, fence) {
        if (fence === undefined) {
          const changed = await db.run(
            `INSERT INTO connector_state (connector_id, key, value) VALUES ($1, $2, $3)
             ON CONFLICT (connector_id, key) DO UPDATE SET value = excluded.value`,
            [connectorId, key, value],
          );
          return changed > 0;
        }
        // FOR SHARE holds the lease row until this write commits, so a takeover waits for it, and a
        // takeover committed first fails the token check on the row's newest version.
        const changed = await db.run(
          `INSERT INTO connector_state (connector_id, key, value)
           SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM connector_leases
             WHERE connector_id = $1 AND token = $4 AND holder IS NOT NULL FOR SHARE)
           ON CONFLICT (connector_id, key) DO UPDATE SET value = excluded.value`,
          [connectorId, key, value, fence],
        );
        return changed > 0;
      },
      async delete(key) {
        await db.run("DELETE FROM connector_state WHERE connector_id = $1 AND key = $2", [connectorId, key]);
      },
      list(prefix) {
        // starts_with rather than LIKE: keys may hold % and _.
        return db.many<{ key: string; value: string }>(
          "SELECT key, value FROM connector_state WHERE connector_id = $1 AND starts_with(key, $2) ORDER BY key",
          [connectorId, prefix],
        );
      },
    };
  }
}

const HEADS = `SELECT min(id) FROM connector_outbox WHERE connector_id = $1 AND status = 'pending' GROUP BY chat_id`;
const CLAIMABLE = "next_attempt_at <= $3 AND (claimed_until IS NULL OR claimed_until <= $3)";

/** The outbox on PostgreSQL. */
export class PostgresOutboxRepo implements OutboxRepo {
  readonly #db: PgDatabase;

  constructor(db: PgDatabase) {
    this.#db = db;
  }

  async add(connectorId: string, messages: readonly OutboundMessage[], now: number): Promise<void> {
    if (messages.length === 0) return;
    await this.#db.transaction(async (tx) => {
      for (const message of messages) {
        await tx.run(
          `INSERT INTO connector_outbox (connector_id, chat_id, payload_json, next_attempt_at, created_at)
           VALUES ($1, $2, $3, $4, $4)`,
          [connectorId, message.chatId, payloadOf(message), now],
        );
      }
    });
  }

  async heads(connectorId: string): Promise<OutboxItem[]> {
    const rows = await this.#db.many<OutboxRow>(
      `SELECT * FROM connector_outbox WHERE id IN (${HEADS}) ORDER BY id`,
      [connectorId],
    );
    return rows.map(toItem);
  }

  async claim(connectorId: string, holder: string, now: number, leaseMs: number): Promise<OutboxItem[]> {
    // Rows another drainer is claiming right now are skipped, not waited for; the outer conditions
    // are re-checked on the locked row, so a claim that committed meanwhile is never taken twice.
    const rows = await this.#db.many<OutboxRow>(
      `UPDATE connector_outbox SET claimed_by = $2, claimed_until = $4
       WHERE id IN (SELECT id FROM connector_outbox WHERE id IN (${HEADS}) AND ${CLAIMABLE}
                    FOR UPDATE SKIP LOCKED)
         AND status = 'pending' AND ${CLAIMABLE}
       RETURNING *`,
      [connectorId, holder, now, now + leaseMs],
    );
    return rows.sort((a, b) => a.id - b.id).map(toItem);
  }

  async nextDue(connectorId: string): Promise<number | undefined> {
    const row = await this.#db.one<{ t: number | null }>(
      `SELECT min(greatest(next_attempt_at, coalesce(claimed_until, 0))) AS t
       FROM connector_outbox WHERE id IN (${HEADS})`,
      [connectorId],
    );
    return row?.t ?? undefined;
  }

  async done(id: number): Promise<void> {
    await this.#db.run("DELETE FROM connector_outbox WHERE id = $1", [id]);
  }

  async retryLater(id: number, holder: string, error: string, nextAttemptAt: number): Promise<boolean> {
    const changed = await this.#db.run(
      `UPDATE connector_outbox SET attempts = attempts + 1, last_error = $1, next_attempt_at = $2,
         claimed_by = NULL, claimed_until = NULL WHERE id = $3 AND claimed_by = $4`,
      [error, nextAttemptAt, id, holder],
    );
    return changed > 0;
  }

  async fail(id: number, holder: string, error: string): Promise<boolean> {
    const changed = await this.#db.run(
      `UPDATE connector_outbox SET attempts = attempts + 1, last_error = $1, status = 'failed',
         claimed_by = NULL, claimed_until = NULL WHERE id = $2 AND claimed_by = $3`,
      [error, id, holder],
    );
    return changed > 0;
  }

  async rewrite(id: number, holder: string, message: OutboundMessage): Promise<boolean> {
    const changed = await this.#db.run(
      `UPDATE connector_outbox SET payload_json = $1, claimed_by = NULL, claimed_until = NULL
       WHERE id = $2 AND claimed_by = $3`,
      [payloadOf(message), id, holder],
    );
    return changed > 0;
  }

  async unclaim(id: number, holder: string): Promise<boolean> {
    const changed = await this.#db.run(
      "UPDATE connector_outbox SET claimed_by = NULL, claimed_until = NULL WHERE id = $1 AND claimed_by = $2",
      [id, holder],
    );
    return changed > 0;
  }

  async unclaimAll(connectorId: string, holder: string): Promise<number> {
    return this.#db.run(
      "UPDATE connector_outbox SET claimed_by = NULL, claimed_until = NULL WHERE connector_id = $1 AND claimed_by = $2",
      [connectorId, holder],
    );
  }

  async counts(connectorId: string): Promise<{ pending: number; failed: number }> {
    return countsOf(
      await this.#db.many<{ status: string; n: number }>(
        "SELECT status, count(*)::int AS n FROM connector_outbox WHERE connector_id = $1 GROUP BY status",
        [connectorId],
      ),
    );
  }

  async list(connectorId: string): Promise<Array<OutboxItem & { status: "pending" | "failed" }>> {
    const rows = await this.#db.many<OutboxRow>(
      "SELECT * FROM connector_outbox WHERE connector_id = $1 ORDER BY id",
      [connectorId],
    );
    return rows.map((row) => ({ ...toItem(row), status: row.status }));
  }
}

/** `LEASE_SQL` with its named slots as `$n` parameters, and the values in that order. */
function positional(sql: string, params: Record<string, unknown>): { text: string; values: unknown[] } {
  const order: string[] = [];
  const text = sql.replace(/:(id|holder|until|now|token)\b/g, (_, name: string) => {
    if (!order.includes(name)) order.push(name);
    return `$${order.indexOf(name) + 1}`;
  });
  return { text, values: order.map((name) => params[name]) };
}

/** The poll leases on PostgreSQL. */
export class PostgresLeaseRepo implements LeaseRepo {
  readonly #db: PgDatabase;

  constructor(db: PgDatabase) {
    this.#db = db;
  }

  async #row(sql: string, params: Record<string, unknown>): Promise<LeaseRow | undefined> {
    const { text, values } = positional(sql, params);
    return this.#db.one<LeaseRow>(text, values);
  }

  async acquire(connectorId: string, holder: string, ttlMs: number, now: number): Promise<Lease | undefined> {
    const row = await this.#row(LEASE_SQL.acquire, { id: connectorId, holder, until: now + ttlMs, now });
    return row ? toLease(row) : undefined;
  }

  async renew(
    connectorId: string,
    holder: string,
    token: number,
    ttlMs: number,
    now: number,
  ): Promise<Lease | undefined> {
    const row = await this.#row(LEASE_SQL.renew, { id: connectorId, holder, token, until: now + ttlMs });
    return row ? toLease(row) : undefined;
  }

  async release(connectorId: string, holder: string, token: number): Promise<boolean> {
    const { text, values } = positional(LEASE_SQL.release, { id: connectorId, holder, token });
    return (await this.#db.run(text, values)) > 0;
  }

  async current(
    connectorId: string,
  ): Promise<{ holder?: string; token: number; expiresAt: number } | undefined> {
    const row = await this.#row(LEASE_SQL.current, { id: connectorId });
    return row ? toLeaseState(row) : undefined;
  }
}
