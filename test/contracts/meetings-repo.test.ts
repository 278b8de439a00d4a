/** The meetings repository: one logic over SQLite and PostgreSQL (migration 20 / 015), same answers. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/store/database.js";
import type { MeetingRecord } from "../../src/team/meeting-types.js";
import {
  type MeetingRepository,
  postgresMeetings,
  sqliteMeetings,
} from "../../src/team/store/meeting-repo.js";
import type { TeamStore } from "../../src/team/team-store.js";
import { createPostgresTeamStore, createSqliteTeamStore } from "../../src/team/team-store.js";
import { openTestPostgres, postgresAvailable } from "../support/postgres.js";

const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const close of closers) await close();
});

async function backends(): Promise<Array<{ name: string; repo: MeetingRepository; team: TeamStore }>> {
  const db = openDatabase(join(mkdtempSync(join(tmpdir(), "dimsum-meetings-")), "dimsum.db"));
  closers.push(async () => {
    db.close();
  });
  const list = [{ name: "sqlite", repo: sqliteMeetings(db), team: createSqliteTeamStore(db) }];
  if (postgresAvailable) {
    const pg = await openTestPostgres();
    closers.push(() => pg.dispose());
    list.push({ name: "postgres", repo: postgresMeetings(pg), team: createPostgresTeamStore(pg) });
  }
  return list;
}

function meeting(id: string, channelId: string, topic: string, at: number): MeetingRecord {
  return {
    id,
    channelId,
    topic,
    participants: ["assistant"],
    rounds: 2,
    moderatorId: "assistant",
    decision: { kind: "free" },
    status: "running",
    round: 1,
    speaker: 0,
    statements: [],
    usage: { tokens: 0, costUsd: 0 },
    startMessageId: 1,
    createdBy: "alice",
    createdAt: at,
    updatedAt: at,
  };
}

describe("meetings repository", async () => {
  for (const { name, repo, team } of await backends()) {
    it(`${name}: saves, reads back, lists open ones and finds minutes by their words`, async () => {
      const channel = await team.channels.insert({
        id: `ch_${name}`,
        kind: "group",
        name: "Council",
        members: [],
        chain: [],
        createdBy: "alice",
        createdAt: 1,
        updatedAt: 1,
      });
      const a = meeting("m_a", channel.id, "Budget 100% plan", 10);
      const b = meeting("m_b", channel.id, "会议 主题", 20);
      await repo.save(a);
      await repo.save(b);
      b.status = "done";
      b.minutes = {
        decision: "Ship CSV",
        reason: "cheapest",
        options: [],
        dissent: [],
        actionItems: [{ task: "parser", owner: "@coder", due: "2026-12-14" }],
        openQuestions: [],
      };
      await repo.save(b);
      expect(await repo.get("m_b")).toEqual(b);
      expect(await repo.get("missing")).toBeUndefined();
      expect((await repo.listByStatus(["running", "closing"])).map((m) => m.id)).toEqual(["m_a"]);
      expect((await repo.listByChannel(channel.id, { limit: 10 })).map((m) => m.id)).toEqual(["m_b", "m_a"]);
      expect(
        (await repo.listByChannel(channel.id, { query: "ship PARSER", limit: 10 })).map((m) => m.id),
      ).toEqual(["m_b"]);
      expect((await repo.listByChannel(channel.id, { query: "主题", limit: 10 })).map((m) => m.id)).toEqual([
        "m_b",
      ]);
      // LIKE's wildcards are plain characters in a query.
      expect((await repo.listByChannel(channel.id, { query: "100%", limit: 10 })).map((m) => m.id)).toEqual([
        "m_a",
      ]);
      expect(await repo.listByChannel(channel.id, { query: "_", limit: 10 })).toEqual([]);
    });
  }
});
