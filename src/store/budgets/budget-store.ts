/**
 * Budgets and what was spent against them (`budgets`, `budget_counters`), one logic over SQLite and
 * PostgreSQL. A budget limits a person, an agent or a group per UTC day or month, in US dollars or
 * tokens. Counting is atomic across instances: a run is admitted by conditional UPDATEs that reserve
 * its expected cost (the last run's under that budget) only while spent + reserved + expected stays
 * within the hard limit, so runs started at once on several instances cannot all pass the limit;
 * each model call then adds what it cost, and the end of the run gives back its reservation.
 */
import { randomUUID } from "node:crypto";
import { one, run, type SqlDatabase, sql } from "../sql-database.js";

export type BudgetScope = "person" | "agent" | "group";
export type BudgetPeriod = "day" | "month";
export type BudgetUnit = "usd" | "tokens";

export interface Budget {
  id: string;
  scope: BudgetScope;
  /** The account id, agent id or group (channel) id. */
  scopeId: string;
  period: BudgetPeriod;
  unit: BudgetUnit;
  /** Past it: a warning, and runs move to `cheaperModel` when set. */
  softLimit: number | null;
  /** Past it: new runs are refused. */
  hardLimit: number | null;
  /** The model (or chain) runs use once the soft limit is passed. */
  cheaperModel: string | null;
  createdAt: number;
  updatedAt: number;
}

export type BudgetInput = Pick<
  Budget,
  "scope" | "scopeId" | "period" | "unit" | "softLimit" | "hardLimit" | "cheaperModel"
>;

/** A budget with what was spent in its current period. */
export interface BudgetStatus extends Budget {
  /** `2026-12-07` or `2026-12` (UTC). */
  periodKey: string;
  spent: number;
  /** The hard limit minus what was spent (never below 0); null without a hard limit. */
  remaining: number | null;
  /** When the current period ends (ms). */
  resetsAt: number;
}

/** What a run holds while it runs: its reservation under each budget that applies. */
export interface BudgetHold {
  budget: Budget;
  periodKey: string;
  reserved: number;
  /** Spent before this run, when it was admitted. */
  spentBefore: number;
}

/** A charge that took a budget past its soft limit (once per budget and period). */
export interface SoftLimitPassed {
  budget: Budget;
  periodKey: string;
  /** Spent after the charge. */
  spent: number;
}

/** Why a run was refused: the budget and where it stands. */
export class BudgetExceeded extends Error {
  constructor(
    readonly budget: Budget,
    readonly spent: number,
    readonly expected: number,
    readonly resetsAt: number,
  ) {
    super(`budget ${budget.id} is spent`);
  }
}

interface BudgetRow {
  id: string;
  scope: BudgetScope;
  scope_id: string;
  period: BudgetPeriod;
  unit: BudgetUnit;
  soft_limit: number | null;
  hard_limit: number | null;
  cheaper_model: string | null;
  created_at: number;
  updated_at: number;
}

interface CounterRow {
  spent: number;
  reserved: number;
  last_run: number;
}

/** The key of the period `now` falls in. */
export function periodKeyOf(period: BudgetPeriod, now: number): string {
  const iso = new Date(now).toISOString();
  return period === "day" ? iso.slice(0, 10) : iso.slice(0, 7);
}

/** When the period `now` falls in ends. */
export function periodEnd(period: BudgetPeriod, now: number): number {
  const d = new Date(now);
  return period === "day"
    ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)
    : Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

function toBudget(row: BudgetRow): Budget {
  return {
    id: row.id,
    scope: row.scope,
    scopeId: row.scope_id,
    period: row.period,
    unit: row.unit,
    softLimit: row.soft_limit === null ? null : Number(row.soft_limit),
    hardLimit: row.hard_limit === null ? null : Number(row.hard_limit),
    cheaperModel: row.cheaper_model,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

const SQL = {
  list: sql("SELECT * FROM budgets ORDER BY scope, scope_id, period, unit"),
  get: sql("SELECT * FROM budgets WHERE id = ?"),
  forScope: sql("SELECT * FROM budgets WHERE scope = ? AND scope_id = ?"),
  insert: sql(`INSERT INTO budgets (id, scope, scope_id, period, unit, soft_limit, hard_limit, cheaper_model,
      created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
  update:
    sql(`UPDATE budgets SET scope = ?, scope_id = ?, period = ?, unit = ?, soft_limit = ?, hard_limit = ?,
      cheaper_model = ?, updated_at = ? WHERE id = ?`),
  delete: sql("DELETE FROM budgets WHERE id = ?"),
  ensureCounter: sql(`INSERT INTO budget_counters (budget_id, period_key, spent, reserved, last_run)
      VALUES (?, ?, 0, 0, 0) ON CONFLICT (budget_id, period_key) DO NOTHING`),
  counter: sql(
    "SELECT spent, reserved, last_run FROM budget_counters WHERE budget_id = ? AND period_key = ?",
  ),
  // The admission: one statement, so instances admitting at once are serialised by the row.
  reserve: sql(`UPDATE budget_counters SET reserved = reserved + $1
      WHERE budget_id = $2 AND period_key = $3 AND spent < $4 AND spent + reserved + $1 <= $4`),
  charge: sql("UPDATE budget_counters SET spent = spent + ? WHERE budget_id = ? AND period_key = ?"),
  release: sql(`UPDATE budget_counters SET reserved = CASE WHEN reserved > $1 THEN reserved - $1 ELSE 0 END,
      last_run = $2 WHERE budget_id = $3 AND period_key = $4`),
} as const;

const SAVE = "save a budget in";
const READ = "read budgets from";
const COUNT = "count spending in";

/** The smallest amount a run is expected to cost before any run under a budget was seen. */
const FIRST_RUN = { usd: 1e-9, tokens: 1 } as const;

/** The budgets repository over one database. */
export class BudgetStore {
  constructor(
    private readonly db: SqlDatabase,
    private readonly now: () => number = Date.now,
  ) {}

  async list(): Promise<Budget[]> {
    return (await this.db.many<BudgetRow>(READ, SQL.list)).map(toBudget);
  }

  async get(id: string): Promise<Budget | undefined> {
    const row = await this.db.one<BudgetRow>(READ, SQL.get, [id]);
    return row ? toBudget(row) : undefined;
  }

  /** The budgets of the given scopes (a run's person, agent and group). */
  async applying(scopes: ReadonlyArray<{ scope: BudgetScope; id: string }>): Promise<Budget[]> {
    const found: Budget[] = [];
    for (const s of scopes) {
      if (!s.id) continue;
      found.push(...(await this.db.many<BudgetRow>(READ, SQL.forScope, [s.scope, s.id])).map(toBudget));
    }
    return found;
  }

  async create(input: BudgetInput): Promise<Budget> {
    const at = this.now();
    const budget: Budget = { ...input, id: `bud_${randomUUID().slice(0, 12)}`, createdAt: at, updatedAt: at };
    await this.db.run(SAVE, SQL.insert, [
      budget.id,
      budget.scope,
      budget.scopeId,
      budget.period,
      budget.unit,
      budget.softLimit,
      budget.hardLimit,
      budget.cheaperModel,
      at,
      at,
    ]);
    return budget;
  }

  async update(id: string, input: BudgetInput): Promise<Budget | undefined> {
    const at = this.now();
    const changed = await this.db.run(SAVE, SQL.update, [
      input.scope,
      input.scopeId,
      input.period,
      input.unit,
      input.softLimit,
      input.hardLimit,
      input.cheaperModel,
      at,
      id,
    ]);
    return changed > 0 ? this.get(id) : undefined;
  }

  async delete(id: string): Promise<boolean> {
    return (await this.db.run(SAVE, SQL.delete, [id])) > 0;
  }

  /** Where each budget stands in its current period. */
  async status(budgets: readonly Budget[]): Promise<BudgetStatus[]> {
    const now = this.now();
    const out: BudgetStatus[] = [];
    for (const budget of budgets) {
      const periodKey = periodKeyOf(budget.period, now);
      const counter = await this.db.one<CounterRow>(READ, SQL.counter, [budget.id, periodKey]);
      const spent = Number(counter?.spent ?? 0);
      out.push({
        ...budget,
        periodKey,
        spent,
        remaining: budget.hardLimit === null ? null : Math.max(0, budget.hardLimit - spent),
        resetsAt: periodEnd(budget.period, now),
      });
    }
    return out;
  }

  /**
   * Admits a run under `budgets`: for each with a hard limit, reserves the run's expected cost, all
   * in one transaction; throws `BudgetExceeded` (nothing reserved) when one would pass its limit.
   * `enforce: false` (a run going on after an approval) only counts.
   */
  async admit(budgets: readonly Budget[], options: { enforce?: boolean } = {}): Promise<BudgetHold[]> {
    if (budgets.length === 0) return [];
    const enforce = options.enforce ?? true;
    const now = this.now();
    return this.db.transaction(COUNT, function* () {
      const holds: BudgetHold[] = [];
      for (const budget of budgets) {
        const periodKey = periodKeyOf(budget.period, now);
        yield* run(SQL.ensureCounter, [budget.id, periodKey]);
        const counter = yield* one<CounterRow>(SQL.counter, [budget.id, periodKey]);
        const spent = Number(counter?.spent ?? 0);
        if (budget.hardLimit === null || !enforce) {
          holds.push({ budget, periodKey, reserved: 0, spentBefore: spent });
          continue;
        }
        const expected = Math.max(Number(counter?.last_run ?? 0), FIRST_RUN[budget.unit]);
        const reserved = yield* run(SQL.reserve, [expected, budget.id, periodKey, budget.hardLimit]);
        if (reserved === 0) {
          // Re-read: on PostgreSQL the row may have moved since the read above.
          const now2 = yield* one<CounterRow>(SQL.counter, [budget.id, periodKey]);
          throw new BudgetExceeded(
            budget,
            Number(now2?.spent ?? spent),
            expected,
            periodEnd(budget.period, now),
          );
        }
        holds.push({ budget, periodKey, reserved: expected, spentBefore: spent });
      }
      return holds;
    });
  }

  /**
   * Adds one model call's cost and tokens to every budget the run is held under; returns the soft
   * limits this call passed. Each charge is read back in its transaction (the row stays locked on
   * PostgreSQL), so of runs charging at once on several instances exactly one passes a soft limit.
   */
  async charge(
    holds: readonly BudgetHold[],
    spend: { usd: number; tokens: number },
  ): Promise<SoftLimitPassed[]> {
    const passed: SoftLimitPassed[] = [];
    for (const hold of holds) {
      const amount = spend[hold.budget.unit];
      if (amount <= 0) continue;
      const soft = hold.budget.softLimit;
      if (soft === null) {
        await this.db.run(COUNT, SQL.charge, [amount, hold.budget.id, hold.periodKey]);
        continue;
      }
      const spent = await this.db.transaction(COUNT, function* () {
        yield* run(SQL.charge, [amount, hold.budget.id, hold.periodKey]);
        return Number((yield* one<CounterRow>(SQL.counter, [hold.budget.id, hold.periodKey]))?.spent ?? 0);
      });
      if (spent >= soft && spent - amount < soft)
        passed.push({ budget: hold.budget, periodKey: hold.periodKey, spent });
    }
    return passed;
  }

  /** Gives back the run's reservations and remembers what it cost, as the next run's expectation. */
  async release(holds: readonly BudgetHold[], total: { usd: number; tokens: number }): Promise<void> {
    for (const hold of holds) {
      await this.db.run(COUNT, SQL.release, [
        hold.reserved,
        total[hold.budget.unit],
        hold.budget.id,
        hold.periodKey,
      ]);
    }
  }
}
