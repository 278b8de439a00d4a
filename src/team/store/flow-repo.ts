/** Collaboration flows, saved whole on every transition so their state survives a restart. */
import type { Database, Statement } from "better-sqlite3";
import type { FlowRecord, FlowStatus, FlowStep } from "../types.js";
import { guard, parseJson } from "./sql-guard.js";

interface FlowRow {
  id: string;
  channel_id: string;
  trigger_message_id: number;
  status: FlowStatus;
  current_step: number;
  steps_json: string;
  created_at: number;
  updated_at: number;
}

function toFlow(row: FlowRow): FlowRecord {
  return {
    id: row.id,
    channelId: row.channel_id,
    triggerMessageId: row.trigger_message_id,
    status: row.status,
    currentStep: row.current_step,
    steps: parseJson<FlowStep[]>(row.steps_json, []),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The flow table. */
export class FlowRepo {
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
      this.#sql.upsert.run(
        flow.id,
        flow.channelId,
        flow.triggerMessageId,
        flow.status,
        flow.currentStep,
        JSON.stringify(flow.steps),
        flow.createdAt,
        flow.updatedAt,
      );
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
