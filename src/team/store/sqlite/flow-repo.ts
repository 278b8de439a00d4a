/** Collaboration flows, saved whole on every transition so their state survives a restart. */
import type { Database, Statement } from "better-sqlite3";
import type { FlowRecord, FlowStatus } from "../../types.js";
import type { FlowRepository } from "../repositories.js";
import { type FlowRow, flowParams, toFlow } from "../rows.js";
import { guard } from "./sql-guard.js";

/** The flow table. */
export class SqliteFlowRepo implements FlowRepository {
  readonly #db: Database;
  readonly #sql: {
    upsert: Statement<unknown[]>;
    get: Statement<[string], FlowRow>;
    byStatus: Statement<[string], FlowRow>;
  };

  constructor(db: Database) {
    this.#db = db;
    this.#sql = {
      upsert: db.prepare(
        `INSERT INTO team_flows (id, channel_id, trigger_message_id, status, current_step, steps_json, created_at,
           updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET status = excluded.status, current_step = excluded.current_step,
           steps_json = excluded.steps_json, updated_at = excluded.updated_at`,
      ),
      get: db.prepare("SELECT * FROM team_flows WHERE id = ?"),
      byStatus: db.prepare("SELECT * FROM team_flows WHERE status = ? ORDER BY created_at"),
    };
  }

  /** Inserts or replaces the flow's state. */
  save(flow: FlowRecord): Promise<void> {
    return guard(this.#db, "save a flow in", () => {
      this.#sql.upsert.run(...flowParams(flow));
    });
  }

  get(id: string): Promise<FlowRecord | undefined> {
    return guard(this.#db, "read a flow from", () => {
      const row = this.#sql.get.get(id);
      return row ? toFlow(row) : undefined;
    });
  }

  listByStatus(status: FlowStatus): Promise<FlowRecord[]> {
    return guard(this.#db, "read flows from", () => this.#sql.byStatus.all(status).map(toFlow));
  }
}
