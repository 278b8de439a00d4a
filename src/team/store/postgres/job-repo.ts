/**
 * Runs as jobs in PostgreSQL: a queued run with a job and no lease waits for a claim. The claim is one
 * statement: the oldest runnable job (its session has no running or waiting run and no older queued
 * one), locked with `FOR UPDATE SKIP LOCKED` so concurrent claimers never take the same row, then
 * leased to the claimer with a new fencing token.
 */
import type { PgDatabase } from "../../../store/postgres/pg-database.js";
import type { RunJob, RunJobRepository, StoredRun } from "../repositories.js";
import { type RunRow, runInsertParams, toStoredRun } from "../rows.js";

const ENQUEUE = `INSERT INTO team_runs (id, channel_id, agent_id, trigger_message_id, status, flow_id,
  step_index, depth, parent_run_id, requested_by, session_user_id, session_id, started_at, job_json)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`;

const CLAIM = `WITH next AS (
    SELECT r.id FROM team_runs r
    WHERE r.status = 'queued' AND r.job_json IS NOT NULL AND r.lease_owner IS NULL
      AND NOT EXISTS (
        SELECT 1 FROM team_runs o
        WHERE o.session_user_id = r.session_user_id AND o.session_id = r.session_id AND o.id <> r.id
          AND (o.status IN ('running', 'waiting')
            OR (o.status = 'queued' AND (o.started_at, o.id) < (r.started_at, r.id))))
    ORDER BY r.started_at, r.id
    LIMIT 1
    FOR UPDATE OF r SKIP LOCKED
  )
  UPDATE team_runs t SET lease_owner = $1, lease_until = $2, fence = t.fence + 1
  FROM next WHERE t.id = next.id
  RETURNING t.*`;

export class PgRunJobRepo implements RunJobRepository {
  constructor(private readonly db: PgDatabase) {}

  async enqueue(stored: StoredRun, job: RunJob): Promise<void> {
    await this.db.run(ENQUEUE, [...runInsertParams(stored), JSON.stringify(job)]);
  }

  async claim(
    owner: string,
    until: number,
  ): Promise<{ stored: StoredRun; job: RunJob; fence: number } | undefined> {
    const row = await this.db.one<RunRow & { fence: number; job_json: string | null }>(CLAIM, [owner, until]);
    if (!row) return undefined;
    const job = parseJob(row.job_json);
    return { stored: toStoredRun(row), job, fence: Number(row.fence) };
  }

  async release(runId: string, fence: number): Promise<boolean> {
    return (await this.db.run(RELEASE, [runId, fence])) > 0;
  }
}

const RELEASE = `UPDATE team_runs SET lease_owner = NULL, lease_until = NULL
  WHERE id = $1 AND fence = $2 AND status = 'queued' AND job_json IS NOT NULL`;

function parseJob(text: string | null): RunJob {
  try {
    const value = JSON.parse(text ?? "{}") as Partial<RunJob>;
    const job: RunJob = { kind: "answer" };
    if (typeof value.versionOf === "number") job.versionOf = value.versionOf;
    if (typeof value.note === "string") job.note = value.note;
    if (value.present === true) job.present = true;
    return job;
  } catch {
    return { kind: "answer" };
  }
}
