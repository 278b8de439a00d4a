/**
 * Run state: a session run's checkpoint (its progress between steps) and `waiting_since`, set while it
 * waits for a person (recovery leaves such a run alone); team runs gain the status `waiting`; the
 * "approve always" grants of a chat; a chat's queue mode; an agent's ask-first tools; the job of a
 * run that any instance may claim.
 */
import type { PgMigration } from "../pg-migrations.js";

const statements = [
  "ALTER TABLE runs ADD COLUMN checkpoint_json TEXT",
  "ALTER TABLE runs ADD COLUMN waiting_since BIGINT",
  `ALTER TABLE team_runs ADD CONSTRAINT team_runs_status_check
     CHECK (status IN ('queued', 'running', 'waiting', 'done', 'error', 'cancelled'))`,
  "CREATE INDEX team_runs_waiting ON team_runs (started_at) WHERE status = 'waiting'",
  `CREATE TABLE team_approval_grants (
    channel_id TEXT NOT NULL REFERENCES team_channels (id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    granted_by TEXT NOT NULL,
    granted_at BIGINT NOT NULL,
    PRIMARY KEY (channel_id, agent_id, tool)
  )`,
  "ALTER TABLE team_channels ADD COLUMN queue_mode TEXT",
  "ALTER TABLE team_agents ADD COLUMN ask_first_json TEXT NOT NULL DEFAULT '[]'",
  // A chat answer is a job any instance may claim: what to run, beside the run's own columns.
  "ALTER TABLE team_runs ADD COLUMN job_json TEXT",
  "CREATE INDEX team_runs_jobs ON team_runs (started_at, id) WHERE status = 'queued' AND job_json IS NOT NULL",
];

export const runState: PgMigration = {
  version: 7,
  name: "run checkpoints, waiting runs, approval grants, queue modes, ask-first tools",
  async up(tx) {
    // The status check of migration 1 has the default name `team_runs_status_check`; it is found by
    // its definition all the same, so a database whose constraint was named otherwise migrates too.
    const checks = await tx.many<{ name: string }>(
      `SELECT conname AS name FROM pg_constraint
       WHERE conrelid = 'team_runs'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%status%'`,
    );
    for (const { name } of checks) {
      await tx.run(`ALTER TABLE team_runs DROP CONSTRAINT "${name.replaceAll('"', '""')}"`);
    }
    for (const statement of statements) await tx.run(statement);
  },
};
