/**
 * Migration 12 (SQLite) and 7 (PostgreSQL) on databases written by the previous schema: team runs
 * keep every row and field through the table rebuild and may now wait; session runs gain empty
 * checkpoints; agents read no ask-first tools and channels no queue mode.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../src/store/database.js";
import { migrations, schemaVersion } from "../../src/store/migrations.js";
import { copyFromSqlite } from "../../src/store/postgres/copy-from-sqlite.js";
import { pgMigrations } from "../../src/store/postgres/migrations/index.js";
import { openPostgres } from "../../src/store/postgres/pg-database.js";
import { PgSessionStore } from "../../src/store/postgres/pg-session-store.js";
import { SqliteSessionStore } from "../../src/store/sqlite-session-store.js";
import { createPostgresTeamStore, createSqliteTeamStore, type TeamStore } from "../../src/team/team-store.js";
import type { TeamRun } from "../../src/team/types.js";
import { createTestDatabase, openTestPostgres, postgresAvailable } from "../support/postgres.js";
import { tempDir } from "./helpers.js";

const now = 1_700_000_000_000;
const ref = { userId: "agent:writer", sessionId: "c1" };

/** Rows the previous schema allowed, written with `?` placeholders (numbered for PostgreSQL). */
const oldRows: Array<[string, unknown[]]> = [
  [
    "INSERT INTO team_agents (id, name, emoji, memory, skills_json, created_at, updated_at) VALUES ('writer', 'Writer', '', 1, '[]', ?, ?)",
    [now, now],
  ],
  [
    "INSERT INTO team_channels (id, kind, name, created_by, created_at, updated_at) VALUES ('c1', 'group', 'G', 'u1', ?, ?)",
    [now, now],
  ],
  [
    `INSERT INTO team_runs (id, channel_id, agent_id, trigger_message_id, status, flow_id, step_index, depth,
       parent_run_id, requested_by, session_user_id, session_id, error, usage_json, started_at, ended_at)
     VALUES ('run-1', 'c1', 'writer', 7, 'done', 'flow-1', 2, 1, 'run-0', 'u1', 'agent:writer', 'c1', 'boom',
       '{"inputTokens":3,"outputTokens":4,"totalTokens":7}', ?, ?)`,
    [now, now + 5],
  ],
  [
    `INSERT INTO team_runs (id, channel_id, agent_id, trigger_message_id, status, depth, requested_by,
       session_user_id, session_id, started_at) VALUES ('run-2', 'c1', 'writer', 8, 'running', 0, 'u1', 'agent:writer', 'c1', ?)`,
    [now + 1],
  ],
  [
    "INSERT INTO sessions (user_id, session_key, created_at, updated_at) VALUES ('agent:writer', 'c1', ?, ?)",
    [now, now],
  ],
  [
    `INSERT INTO runs (id, session_id, status, model, started_at)
     SELECT 'run-2', id, 'running', 'm', ? FROM sessions WHERE session_key = 'c1'`,
    [now + 1],
  ],
];

const numbered = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

/** What the team and session stores read back after the migration, the same on both backends. */
async function checkMigrated(
  team: TeamStore,
  sessions: SqliteSessionStore | PgSessionStore,
  expectRejected: (status: string) => Promise<void>,
): Promise<void> {
  const done: TeamRun = {
    id: "run-1",
    channelId: "c1",
    agentId: "writer",
    triggerMessageId: 7,
    status: "done",
    flowId: "flow-1",
    stepIndex: 2,
    depth: 1,
    parentRunId: "run-0",
    error: "boom",
    usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 },
    startedAt: now,
    endedAt: now + 5,
  };
  expect(await team.runs.get("run-1")).toEqual({ run: done, ref, requestedBy: "u1" });
  expect((await team.runs.listOpen()).map((s) => s.run.id)).toEqual(["run-2"]);
  // The new status is allowed, an unknown one still refused.
  const running = (await team.runs.get("run-2"))!.run;
  await team.runs.update({ ...running, status: "waiting" });
  expect((await team.runs.listWaiting(ref)).map((s) => s.run.id)).toEqual(["run-2"]);
  expect(await team.runs.claimWaiting("run-2", now + 9)).toBe(true);
  await expectRejected("paused");

  expect((await team.agents.get("writer"))?.askFirst).toEqual([]);
  expect(await team.channels.get("c1")).not.toHaveProperty("queueMode");
  await team.grants.add({ channelId: "c1", agentId: "writer", tool: "x", grantedBy: "u1", grantedAt: now });
  expect(await team.grants.has("c1", "writer", "x")).toBe(true);

  expect(await sessions.loadCheckpoint(ref, "run-2")).toBeUndefined();
  await sessions.saveCheckpoint(ref, "run-2", { step: 1 }, { waiting: true });
  expect((await sessions.recoverInterruptedRuns(ref)).runs).toEqual([]);
  expect((await sessions.loadCheckpoint(ref, "run-2"))?.checkpoint).toEqual({ step: 1 });
}

describe("migration 12 on SQLite: run state", () => {
  it("rebuilds team_runs keeping every row, its indexes and WITHOUT ROWID", async () => {
    const file = join(tempDir(), "dimsum.db");
    const old = openDatabase(file, { migrations: migrations.slice(0, 11) });
    expect(schemaVersion(old)).toBe(11);
    for (const [sql, params] of oldRows) old.prepare(sql).run(...params);
    expect(() => old.prepare("UPDATE team_runs SET status = 'waiting' WHERE id = 'run-2'").run()).toThrow(
      /CHECK/,
    );
    old.close();

    // Opened with every migration: 12 and the later ones, as a real upgrade would.
    const db = openDatabase(file);
    try {
      expect(schemaVersion(db)).toBe(migrations.length);
      const table = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'team_runs'").pluck().get();
      expect(table).toContain("WITHOUT ROWID");
      expect(table).toContain("'waiting'");
      const indexes = db
        .prepare(
          "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'team_runs' AND sql IS NOT NULL",
        )
        .pluck()
        .all();
      expect(indexes.sort()).toEqual(["team_runs_channel", "team_runs_open", "team_runs_waiting"]);
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'team_runs_new'").get()).toBeUndefined();
      expect(db.pragma("foreign_key_check")).toEqual([]);
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");

      await checkMigrated(createSqliteTeamStore(db), new SqliteSessionStore(db), async (status) => {
        expect(() => db.prepare("UPDATE team_runs SET status = ? WHERE id = 'run-1'").run(status)).toThrow(
          /CHECK/,
        );
      });
    } finally {
      db.close();
    }
  });
});

describe.skipIf(!postgresAvailable)("migration 7 on PostgreSQL: run state", () => {
  it("replaces the team_runs status check and keeps the rows", async () => {
    const created = await createTestDatabase();
    try {
      const old = await openPostgres(created.url, { migrations: pgMigrations.slice(0, 6) });
      for (const [sql, params] of oldRows) await old.run(numbered(sql), params);
      await expect(old.run("UPDATE team_runs SET status = 'waiting' WHERE id = 'run-2'")).rejects.toThrow();
      await old.close();

      const db = await openPostgres(created.url);
      try {
        const checks = await db.many<{ name: string; def: string }>(
          `SELECT conname AS name, pg_get_constraintdef(oid) AS def FROM pg_constraint
           WHERE conrelid = 'team_runs'::regclass AND contype = 'c'`,
        );
        expect(checks.map((c) => c.name)).toEqual(["team_runs_status_check"]);
        expect(checks[0]?.def).toContain("'waiting'");
        await checkMigrated(createPostgresTeamStore(db), new PgSessionStore(db), async (status) => {
          await expect(
            db.run("UPDATE team_runs SET status = $1 WHERE id = 'run-1'", [status]),
          ).rejects.toThrow();
        });
      } finally {
        await db.close();
      }
    } finally {
      await created.drop();
    }
  });
});

describe.skipIf(!postgresAvailable)("dimsum migrate copies the run state", () => {
  it("checkpoints, waiting runs, grants, queue modes and ask-first tools reach PostgreSQL", async () => {
    const source = openDatabase(join(tempDir(), "dimsum.db"));
    const target = await openTestPostgres();
    try {
      const clock = { now: () => now };
      const team = createSqliteTeamStore(source);
      const sessions = new SqliteSessionStore(source, clock);
      await team.agents.insert({
        id: "writer",
        name: "Writer",
        emoji: "",
        toolsDeny: [],
        memory: true,
        skills: [],
        askFirst: ["execute_command"],
        createdAt: now,
        updatedAt: now,
      });
      await team.channels.insert({
        id: "c1",
        kind: "group",
        name: "G",
        queueMode: "followup",
        members: [{ type: "agent", id: "writer" }],
        chain: [],
        createdBy: "u1",
        createdAt: now,
        updatedAt: now,
      });
      await team.grants.add({
        channelId: "c1",
        agentId: "writer",
        tool: "x",
        grantedBy: "u1",
        grantedAt: now,
      });
      const run: TeamRun = {
        id: "run-1",
        channelId: "c1",
        agentId: "writer",
        triggerMessageId: 1,
        status: "waiting",
        depth: 0,
        startedAt: now,
      };
      await team.runs.insert({ run, ref, requestedBy: "u1" });
      await sessions.openSession(ref);
      await sessions.startRun(ref, { runId: "run-1", model: "m" });
      await sessions.saveCheckpoint(ref, "run-1", { step: 3 }, { waiting: true });

      const report = await copyFromSqlite(source, target, []);
      expect(report.tables.every((t) => t.source === t.target)).toBe(true);
      expect(report.tables.find((t) => t.table === "team_approval_grants")?.target).toBe(1);

      const copied = createPostgresTeamStore(target);
      expect(await copied.agents.get("writer")).toEqual(await team.agents.get("writer"));
      expect((await copied.channels.get("c1"))?.queueMode).toBe("followup");
      expect(await copied.grants.list("c1")).toEqual(await team.grants.list("c1"));
      expect((await copied.runs.listWaiting(ref)).map((s) => s.run)).toEqual([run]);
      expect(await new PgSessionStore(target).loadCheckpoint(ref, "run-1")).toEqual({
        checkpoint: { step: 3 },
        waitingSince: now,
      });
    } finally {
      source.close();
      await target.dispose();
    }
  });
});
