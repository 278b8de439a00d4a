/**
 * The budgets repository on SQLite: periods roll over at UTC day and month ends, token budgets count
 * tokens, an admission reserves the last run's cost and its end gives it back, a run going on after
 * an approval is counted but never refused, deleting a budget deletes its counters, and of model
 * calls charged at once (on one SQLite file, or two PostgreSQL connections) exactly one passes a soft
 * limit.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BudgetExceeded, BudgetStore, periodEnd, periodKeyOf } from "../../src/store/budgets/budget-store.js";
import { openDatabase } from "../../src/store/database.js";
import { openPostgres } from "../../src/store/postgres/pg-database.js";
import { postgresDatabase, sqliteDatabase } from "../../src/store/sql-database.js";
import { createTestDatabase, postgresAvailable } from "../support/postgres.js";

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const SOFT = {
  scope: "person",
  scopeId: "usr_mia",
  period: "day",
  unit: "tokens",
  softLimit: 100,
  hardLimit: null,
  cheaperModel: null,
} as const;

/** Twenty model calls of 10 tokens charged at once through `stores`: the soft limits they passed. */
async function chargeAtOnce(stores: readonly BudgetStore[]) {
  const [first] = stores;
  if (!first) throw new Error("no store");
  await first.create({ ...SOFT });
  const holds = await Promise.all(
    stores.map(async (s) => s.admit(await s.applying([{ scope: "person", id: "usr_mia" }]))),
  );
  const passed = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      stores[i % stores.length]?.charge(holds[i % stores.length] ?? [], { usd: 0, tokens: 10 }),
    ),
  );
  return passed.flat();
}

function store(now: () => number) {
  const dir = mkdtempSync(join(tmpdir(), "dimsum-budgets-"));
  const db = openDatabase(join(dir, "dimsum.db"));
  cleanups.push(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { db, budgets: new BudgetStore(sqliteDatabase(db), now) };
}

describe("BudgetStore", () => {
  it("names and ends periods in UTC", () => {
    const at = Date.UTC(2026, 11, 31, 23, 30);
    expect(periodKeyOf("day", at)).toBe("2026-12-31");
    expect(periodKeyOf("month", at)).toBe("2026-12");
    expect(periodEnd("day", at)).toBe(Date.UTC(2027, 0, 1));
    expect(periodEnd("month", at)).toBe(Date.UTC(2027, 0, 1));
  });

  it("counts tokens, reserves the last run's size, refuses past the limit and starts over next month", async () => {
    let now = Date.UTC(2026, 11, 7, 12);
    const { db, budgets } = store(() => now);
    const budget = await budgets.create({
      scope: "agent",
      scopeId: "coder",
      period: "month",
      unit: "tokens",
      softLimit: null,
      hardLimit: 1000,
      cheaperModel: null,
    });
    const applying = await budgets.applying([
      { scope: "agent", id: "coder" },
      { scope: "person", id: "nobody" },
    ]);
    expect(applying.map((b) => b.id)).toEqual([budget.id]);

    const first = await budgets.admit(applying);
    await budgets.charge(first, { usd: 0.5, tokens: 400 });
    await budgets.release(first, { usd: 0.5, tokens: 400 });
    expect((await budgets.status(applying))[0]).toMatchObject({
      spent: 400,
      remaining: 600,
      periodKey: "2026-12",
    });

    // Expected 400 more: 800 ≤ 1000 admits one; a second at the same time would make 1200.
    const second = await budgets.admit(applying);
    await expect(budgets.admit(applying)).rejects.toSatisfy((err: unknown) => {
      for (let e: unknown = err; e instanceof Error; e = e.cause)
        if (e instanceof BudgetExceeded) return e.spent === 400;
      return false;
    });
    // Going on after an approval is counted, never refused.
    const resumed = await budgets.admit(applying, { enforce: false });
    await budgets.release(resumed, { usd: 0, tokens: 0 });
    await budgets.charge(second, { usd: 0, tokens: 500 });
    await budgets.release(second, { usd: 0, tokens: 500 });
    expect((await budgets.status(applying))[0]).toMatchObject({ spent: 900, remaining: 100 });
    await expect(budgets.admit(applying)).rejects.toBeDefined();

    now = Date.UTC(2027, 0, 1, 0, 1);
    expect((await budgets.status(applying))[0]).toMatchObject({
      spent: 0,
      remaining: 1000,
      periodKey: "2027-01",
    });
    await budgets.release(await budgets.admit(applying), { usd: 0, tokens: 0 });

    expect(await budgets.delete(budget.id)).toBe(true);
    expect(db.prepare("SELECT count(*) AS n FROM budget_counters").get()).toEqual({ n: 0 });
  });

  it("reports the one charge that passes a soft limit", async () => {
    const { budgets } = store(Date.now);
    const passed = await chargeAtOnce([budgets]);
    expect(passed).toEqual([
      expect.objectContaining({ spent: 100, budget: expect.objectContaining({ softLimit: 100 }) }),
    ]);
  });

  it.skipIf(!postgresAvailable)(
    "reports it once when two instances charge at once on PostgreSQL",
    async () => {
      const created = await createTestDatabase();
      const a = await openPostgres(created.url);
      const b = await openPostgres(created.url);
      cleanups.push(async () => {
        await a.close();
        await b.close();
        await created.drop();
      });
      const passed = await chargeAtOnce([
        new BudgetStore(postgresDatabase(a)),
        new BudgetStore(postgresDatabase(b)),
      ]);
      expect(passed).toEqual([expect.objectContaining({ spent: 100 })]);
    },
  );
});
