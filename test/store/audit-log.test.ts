/**
 * The audit log repository on both databases: entries chained by hash, filters, retention that moves
 * the chain's start (what remains still verifies), secrets redacted before writing, and on PostgreSQL
 * two instances (two pools) appending at once without breaking or forking the chain.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AuditLog } from "../../src/store/audit/audit-log.js";
import { redactSecrets } from "../../src/store/audit/redact.js";
import { openDatabase } from "../../src/store/database.js";
import { copyFromSqlite } from "../../src/store/postgres/copy-from-sqlite.js";
import { openPostgres } from "../../src/store/postgres/pg-database.js";
import { postgresDatabase, sqliteDatabase } from "../../src/store/sql-database.js";
import { cleanEnv, runCli } from "../support/cli.js";
import { createTestDatabase, postgresAvailable } from "../support/postgres.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function sqliteLog(now: () => number = Date.now) {
  const dir = mkdtempSync(join(tmpdir(), "dimsum-audit-store-"));
  const db = openDatabase(join(dir, "dimsum.db"));
  cleanups.push(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { db, log: new AuditLog(sqliteDatabase(db), { instance: "test", now }) };
}

describe("redactSecrets", () => {
  it("hides values under secret keys and credential-shaped strings anywhere, keeps the rest", () => {
    expect(
      redactSecrets({
        apiKey: "abc",
        "x-api-key": "abc",
        newPassword: "p",
        env: { A: "b" },
        headers: { Authorization: "Bearer x" },
        secrets: { secret: "s" },
        note: "use sk-abcdefghijklmnop or dsk_abcdefghijkl, Bearer abcdefghijk",
        url: "postgres://me:hunter2@db/x",
        maxTokens: 100,
        keyPreview: "sk-…1234",
        name: "kept",
      }),
    ).toEqual({
      apiKey: "[redacted]",
      "x-api-key": "[redacted]",
      newPassword: "[redacted]",
      env: "[redacted]",
      headers: "[redacted]",
      secrets: "[redacted]",
      note: "use [redacted] or [redacted], [redacted]",
      url: "postgres://me:[redacted]@db/x",
      maxTokens: 100,
      keyPreview: "sk-…1234",
      name: "kept",
    });
  });
});

describe("AuditLog on SQLite", () => {
  it("chains entries, filters them, and keeps verifying after retention deletes the oldest", async () => {
    let now = Date.UTC(2026, 0, 1);
    const { db, log } = sqliteLog(() => now);
    const day = 24 * 60 * 60 * 1000;
    await log.record({
      actor: { id: "u1", name: "alice" },
      action: "auth.sign_in",
      origin: { ip: "10.0.0.1" },
    });
    now += 10 * day;
    await log.record({
      actor: { id: "u1", name: "alice" },
      action: "provider.key_set",
      target: "openai",
      after: { apiKey: "sk-secretsecret" },
    });
    now += 10 * day;
    await log.record({ actor: { id: "u2", name: "bob" }, action: "auth.sign_in_failed" });
    expect((await log.list()).map((e) => e.seq)).toEqual([3, 2, 1]);
    expect((await log.list({ actor: "alice" })).map((e) => e.action)).toEqual([
      "provider.key_set",
      "auth.sign_in",
    ]);
    expect((await log.list({ action: "auth" })).map((e) => e.seq)).toEqual([3, 1]);
    expect((await log.list({ action: "auth.sign_in" })).map((e) => e.seq)).toEqual([1]);
    expect(
      (await log.list({ from: Date.UTC(2026, 0, 5), to: Date.UTC(2026, 0, 15) })).map((e) => e.seq),
    ).toEqual([2]);
    expect((await log.list({ limit: 1, beforeSeq: 3 })).map((e) => e.seq)).toEqual([2]);
    expect((await log.list({ action: "provider" }))[0]?.after).toEqual({ apiKey: "[redacted]" });
    expect(JSON.stringify(db.prepare("SELECT * FROM audit_log").all())).not.toContain("sk-secretsecret");
    expect(await log.verify()).toMatchObject({ ok: true, checked: 3, prunedThrough: 0 });

    // Keep 15 days: the first is past it (at day 0; the others at day 10 and 20, now).
    await log.setRetentionDays(15);
    expect(await log.retentionDays()).toBe(15);
    expect((await log.list()).map((e) => e.seq)).toEqual([3, 2]);
    expect(await log.verify()).toEqual({ ok: true, checked: 2, prunedThrough: 1, problems: [] });
    await log.record({ action: "settings.update" });
    expect(await log.verify()).toMatchObject({ ok: true, checked: 3 });

    // Deleting the first remaining entry by hand is not retention: it is reported.
    db.prepare("DELETE FROM audit_log WHERE seq = 2").run();
    expect((await log.verify()).problems).toEqual([expect.objectContaining({ seq: 2, problem: "missing" })]);
  });
});

describe.skipIf(!postgresAvailable)("AuditLog on PostgreSQL", () => {
  it("keeps its chain through dimsum migrate's copy from SQLite, and goes on from it", async () => {
    const { db, log } = sqliteLog();
    await log.record({ actor: { id: "u1", name: "alice" }, action: "auth.sign_in", origin: { ip: "::1" } });
    await log.record({ action: "settings.update", before: { a: 1 }, after: { a: 2, note: "ü ✓" } });
    const created = await createTestDatabase();
    const target = await openPostgres(created.url);
    cleanups.push(async () => {
      await target.close();
      await created.drop();
    });
    await copyFromSqlite(db, target, []);
    const copied = new AuditLog(postgresDatabase(target));
    expect(await copied.verify()).toEqual({ ok: true, checked: 2, prunedThrough: 0, problems: [] });
    await copied.record({ action: "auth.sign_out" });
    expect(await copied.verify()).toMatchObject({ ok: true, checked: 3 });
  });

  it("two instances appending at once keep one unbroken chain; dimsum audit verify agrees", async () => {
    const created = await createTestDatabase();
    const a = await openPostgres(created.url);
    const b = await openPostgres(created.url);
    cleanups.push(async () => {
      await a.close();
      await b.close();
      await created.drop();
    });
    const one = new AuditLog(postgresDatabase(a), { instance: "instance-a" });
    const two = new AuditLog(postgresDatabase(b), { instance: "instance-b" });
    const writes = (log: AuditLog, who: string) =>
      Array.from({ length: 60 }, (_, i) =>
        log.record({ actor: { name: who }, action: "settings.update", after: { i } }),
      );
    const entries = await Promise.all([...writes(one, "a"), ...writes(two, "b")]);
    expect(entries.map((e) => e.seq).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 120 }, (_, i) => i + 1),
    );
    expect(await one.verify()).toEqual({ ok: true, checked: 120, prunedThrough: 0, problems: [] });
    expect(new Set((await two.list({ limit: 1000 })).map((e) => e.instance))).toEqual(
      new Set(["instance-a", "instance-b"]),
    );

    const env = cleanEnv({ DIMSUM_DATABASE_URL: created.url });
    const whole = await runCli(["audit", "verify"], { env });
    expect(whole.stdout).toContain("120 entries verified");
    expect(whole.code).toBe(0);
    await a.run("UPDATE audit_log SET after_json = '{\"i\":999}' WHERE seq = 7");
    await a.run("DELETE FROM audit_log WHERE seq = 50");
    const tampered = await runCli(["audit", "verify", "--json"], { env });
    expect(tampered.code).toBe(1);
    expect(JSON.parse(tampered.stdout).problems).toEqual([
      expect.objectContaining({ seq: 7, problem: "edited" }),
      expect.objectContaining({ seq: 50, problem: "missing" }),
    ]);
  }, 60_000);
});
