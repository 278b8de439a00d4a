/**
 * Poll leases: which instance may run a connector's single-consumer work (Telegram long polling,
 * which Telegram serves to one caller at a time) while several instances share the database. A
 * lease has a holder, an expiry and a fencing token that grows with every new holder (and every new
 * tenure after a lapse), so a holder that paused past its expiry can tell, and writes stamped with
 * an old token can be refused. The row stays after a release so the token never goes back.
 * The repository interface and its one implementation over SQLite and PostgreSQL.
 */
import { type SqlDatabase, sql } from "../../store/sql-database.js";

export interface Lease {
  connectorId: string;
  holder: string;
  /** Grows with every new tenure; compare it to tell a current holder from a superseded one. */
  token: number;
  expiresAt: number;
}

/** The connector_leases table. */
export interface LeaseRepo {
  /**
   * Takes the connector's lease for `holder` until `now + ttlMs` if it is free, released, lapsed, or
   * already `holder`'s (then it is extended and keeps its token). Undefined while another holder's
   * lease runs. Atomic across instances: of several acquiring a free lease exactly one gets it.
   */
  acquire(connectorId: string, holder: string, ttlMs: number, now: number): Promise<Lease | undefined>;
  /**
   * Extends `holder`'s lease with `token` to `now + ttlMs`; undefined when the lease has moved on
   * (someone else acquired it, or it was released), so the caller must stop its work.
   */
  renew(
    connectorId: string,
    holder: string,
    token: number,
    ttlMs: number,
    now: number,
  ): Promise<Lease | undefined>;
  /** Gives the lease up (it is free at once); false when `holder` with `token` no longer had it. */
  release(connectorId: string, holder: string, token: number): Promise<boolean>;
  /** The lease as stored, held or not (a released one has no holder), or undefined when never taken. */
  current(connectorId: string): Promise<{ holder?: string; token: number; expiresAt: number } | undefined>;
}

export interface LeaseRow {
  connector_id: string;
  holder: string | null;
  token: number;
  expires_at: number;
}

export function toLease(row: LeaseRow): Lease {
  return {
    connectorId: row.connector_id,
    holder: row.holder ?? "",
    token: row.token,
    expiresAt: row.expires_at,
  };
}

export function toLeaseState(row: LeaseRow): { holder?: string; token: number; expiresAt: number } {
  return {
    ...(row.holder !== null ? { holder: row.holder } : {}),
    token: row.token,
    expiresAt: row.expires_at,
  };
}

/** The statements, the same on both databases. */
const SQL = {
  // $1 connector, $2 holder, $3 new expiry, $4 now
  acquire: sql(`INSERT INTO connector_leases (connector_id, holder, token, expires_at) VALUES ($1, $2, 1, $3)
      ON CONFLICT (connector_id) DO UPDATE SET
        token = CASE WHEN connector_leases.holder = excluded.holder AND connector_leases.expires_at > $4
                     THEN connector_leases.token ELSE connector_leases.token + 1 END,
        holder = excluded.holder, expires_at = excluded.expires_at
      WHERE connector_leases.holder IS NULL OR connector_leases.expires_at <= $4
         OR connector_leases.holder = excluded.holder
      RETURNING *`),
  // A lapsed lease nobody took since is still the holder's to renew: the token proves it.
  // $1 connector, $2 holder, $3 token, $4 new expiry
  renew: sql(`UPDATE connector_leases SET expires_at = $4
      WHERE connector_id = $1 AND holder = $2 AND token = $3 RETURNING *`),
  release: sql(`UPDATE connector_leases SET holder = NULL, expires_at = 0
      WHERE connector_id = ? AND holder = ? AND token = ?`),
  current: sql("SELECT * FROM connector_leases WHERE connector_id = ?"),
} as const;

const SAVE = "save a connector lease in";

/** The poll leases, one logic over either database. */
export class LeaseRepository implements LeaseRepo {
  constructor(private readonly db: SqlDatabase) {}

  async acquire(connectorId: string, holder: string, ttlMs: number, now: number): Promise<Lease | undefined> {
    const row = await this.db.one<LeaseRow>(SAVE, SQL.acquire, [connectorId, holder, now + ttlMs, now]);
    return row ? toLease(row) : undefined;
  }

  async renew(
    connectorId: string,
    holder: string,
    token: number,
    ttlMs: number,
    now: number,
  ): Promise<Lease | undefined> {
    const row = await this.db.one<LeaseRow>(SAVE, SQL.renew, [connectorId, holder, token, now + ttlMs]);
    return row ? toLease(row) : undefined;
  }

  async release(connectorId: string, holder: string, token: number): Promise<boolean> {
    return (await this.db.run(SAVE, SQL.release, [connectorId, holder, token])) > 0;
  }

  async current(
    connectorId: string,
  ): Promise<{ holder?: string; token: number; expiresAt: number } | undefined> {
    const row = await this.db.one<LeaseRow>(SAVE, SQL.current, [connectorId]);
    return row ? toLeaseState(row) : undefined;
  }
}
