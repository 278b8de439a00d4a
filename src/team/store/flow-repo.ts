/** Collaboration flows, saved whole on every transition so their state survives a restart. */
import { type SqlDatabase, sql } from "../../store/sql-database.js";
import type { FlowRecord, FlowStatus } from "../types.js";
import type { FlowRepository } from "./repositories.js";
import { type FlowRow, flowParams, toFlow } from "./rows.js";

const SQL = {
  upsert: sql(
    `INSERT INTO team_flows (id, channel_id, trigger_message_id, status, current_step, steps_json, created_at,
       updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET status = excluded.status, current_step = excluded.current_step,
       steps_json = excluded.steps_json, updated_at = excluded.updated_at`,
  ),
  get: sql("SELECT * FROM team_flows WHERE id = ?"),
  byStatus: sql({
    sqlite: "SELECT * FROM team_flows WHERE status = ? ORDER BY created_at",
    postgres: "SELECT * FROM team_flows WHERE status = ? ORDER BY created_at, id",
  }),
} as const;

/** The team_flows table. */
export class FlowRepo implements FlowRepository {
  constructor(private readonly db: SqlDatabase) {}

  /** Inserts or replaces the flow's state. */
  async save(flow: FlowRecord): Promise<void> {
    await this.db.run("save a flow in", SQL.upsert, flowParams(flow));
  }

  async get(id: string): Promise<FlowRecord | undefined> {
    const row = await this.db.one<FlowRow>("read a flow from", SQL.get, [id]);
    return row ? toFlow(row) : undefined;
  }

  async listByStatus(status: FlowStatus): Promise<FlowRecord[]> {
    return (await this.db.many<FlowRow>("read flows from", SQL.byStatus, [status])).map(toFlow);
  }
}
