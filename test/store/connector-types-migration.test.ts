/**
 * Migration 14 (SQLite) and 9 (PostgreSQL) on databases written by the previous schema: connectors
 * may be of type dingtalk and wecom, and every connector with its state and outbox stays.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../src/store/database.js";
import { migrations, schemaVersion } from "../../src/store/migrations.js";
import { pgMigrations } from "../../src/store/postgres/migrations/index.js";
import { openPostgres } from "../../src/store/postgres/pg-database.js";
import { createTestDatabase, postgresAvailable } from "../support/postgres.js";
import { tempDir } from "./helpers.js";

const insertConnector = (id: string, type: string) =>
  `INSERT INTO connectors (id, type, name, agent_id, created_by, created_at, updated_at) VALUES ('${id}', '${type}', 'n', 'a', 'u', 1, 1)`;

describe("migration 14 on SQLite: connector types", () => {
  it("widens the type check and keeps connectors, their state and outbox", () => {
    const file = join(tempDir(), "dimsum.db");
    const old = openDatabase(file, { migrations: migrations.slice(0, 13) });
    old.exec(insertConnector("c1", "telegram"));
    old.exec("INSERT INTO connector_state (connector_id, key, value) VALUES ('c1', 'telegram.offset', '42')");
    old.exec(
      "INSERT INTO connector_outbox (connector_id, chat_id, payload_json, next_attempt_at, created_at) VALUES ('c1', 'x', '{}', 0, 0)",
    );
    expect(() => old.exec(insertConnector("c2", "dingtalk"))).toThrow(/CHECK/);
    old.close();

    const db = openDatabase(file, { migrations: migrations.slice(0, 14) });
    try {
      expect(schemaVersion(db)).toBe(14);
      db.exec(insertConnector("c2", "dingtalk"));
      db.exec(insertConnector("c3", "wecom"));
      expect(() => db.exec(insertConnector("c4", "irc"))).toThrow(/CHECK/);
      expect(db.prepare("SELECT value FROM connector_state WHERE connector_id = 'c1'").pluck().get()).toBe(
        "42",
      );
      expect(db.prepare("SELECT count(*) FROM connector_outbox").pluck().get()).toBe(1);
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
      expect(db.pragma("foreign_key_check")).toEqual([]);
    } finally {
      db.close();
    }
  });
});

describe.skipIf(!postgresAvailable)("migration 9 on PostgreSQL: connector types", () => {
  it("replaces the type check and keeps the rows", async () => {
    const created = await createTestDatabase();
    try {
      const old = await openPostgres(created.url, { migrations: pgMigrations.slice(0, 8) });
      await old.run(insertConnector("c1", "feishu"));
      await expect(old.run(insertConnector("c2", "wecom"))).rejects.toThrow(/check/i);
      await old.close();
      const db = await openPostgres(created.url, { migrations: pgMigrations.slice(0, 9) });
      try {
        await db.run(insertConnector("c2", "wecom"));
        await db.run(insertConnector("c3", "dingtalk"));
        await expect(db.run(insertConnector("c4", "irc"))).rejects.toThrow(/check/i);
        expect(
          (await db.many<{ id: string }>("SELECT id FROM connectors ORDER BY id")).map((r) => r.id),
        ).toEqual(["c1", "c2", "c3"]);
      } finally {
        await db.close();
      }
    } finally {
      await created.drop();
    }
  });
});
