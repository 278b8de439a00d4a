/** Collaboration flows in PostgreSQL, saved whole on every transition. */
import type { PgDatabase } from "../../../store/postgres/pg-database.js";
import type { FlowRecord, FlowStatus } from "../../types.js";
import type { FlowRepository } from "../repositories.js";
import { type FlowRow, flowParams, toFlow } from "../rows.js";

export class PgFlowRepo implements FlowRepository {
  constructor(private readonly db: PgDatabase) {}

  async save(flow: FlowRecord): Promise<void> {
    await this.db.run(
      `INSERT INTO team_flows (id, channel_id, trigger_message_id, status, current_step, steps_json, created_at,
         updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (id) DO UPDATE SET status = excluded.status, current_step = excluded.current_step,
         steps_json = excluded.steps_json, updated_at = excluded.updated_at`,
      flowParams(flow),
    );
  }

  async get(id: string): Promise<FlowRecord | undefined> {
    const row = await this.db.one<FlowRow>("SELECT * FROM team_flows WHERE id = $1", [id]);
    return row ? toFlow(row) : undefined;
  }

  async listByStatus(status: FlowStatus): Promise<FlowRecord[]> {
    const rows = await this.db.many<FlowRow>(
      "SELECT * FROM team_flows WHERE status = $1 ORDER BY created_at, id",
      [status],
    );
    return rows.map(toFlow);
  }
}
