/**
 * The budgets repository on SQLite: periods roll over at UTC day and month ends, token budgets count
 * tokens, an admission reserves the last run's cost and its end gives it back, a run going on after
 * an approval is counted but never refused, and deleting a budget deletes its counters.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BudgetExceeded, BudgetStore, periodEnd, periodKeyOf } from "../../src/store/budgets/budget-store.js";
import { openDatabase } from "../../src/store/database.js";
import { sqliteDatabase } from "../../src/store/sql-database.js";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

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
});
