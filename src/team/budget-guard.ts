/**
 * Budgets applied to agent turns: before a turn, the budgets of its person, agent and group admit it
 * (or refuse it with what to do), and past a soft limit the turn uses the budget's cheaper model;
 * during the turn each model call's cost and tokens are counted, and once a hard limit is passed the
 * turn stops at its next step (the step under way finishes).
 */
import type { AgentEvent } from "../agent/events.js";
import { DimsumError } from "../errors.js";
import {
  type Budget,
  BudgetExceeded,
  type BudgetHold,
  type BudgetStore,
  type SoftLimitPassed,
} from "../store/budgets/budget-store.js";
import type { BudgetNotice } from "./types.js";

/** A turn admitted under its budgets. */
export interface BudgetGate {
  /** The model (or chain) to use instead of the agent's: a soft limit was passed. */
  readonly cheaperModel: string | undefined;
  /** Why (shown with the answer): which soft limit was passed. */
  readonly softReason: string | undefined;
  /** Counts a model call (the agent's `usage` event). */
  counted(event: Extract<AgentEvent, { type: "usage" }>): Promise<void>;
  /** Throws when a hard limit was passed during the turn (call before each further step). */
  checkStep(): void;
  /** Ends the turn: gives back its reservations. */
  end(): Promise<void>;
}

export interface TurnScope {
  person: string | undefined;
  agentId: string;
  channelId: string;
  /** A turn going on (after an approval): counted, never refused. */
  resumed?: boolean;
}

function amount(budget: Budget, value: number): string {
  return budget.unit === "usd"
    ? `$${value
        .toFixed(value < 1 ? 4 : 2)
        .replace(/0+$/, "")
        .replace(/\.$/, "")}`
    : `${Math.round(value)} tokens`;
}

function whose(budget: Budget, scope: TurnScope): string {
  if (budget.scope === "person") return budget.scopeId === scope.person ? "your" : `${budget.scopeId}'s`;
  if (budget.scope === "agent") return `@${budget.scopeId}'s`;
  return "this group's";
}

/** The refusal a person reads in the chat (and a `/v1` caller as a 429). */
export function budgetRefusal(err: BudgetExceeded, scope: TurnScope): DimsumError {
  const b = err.budget;
  const limit = b.hardLimit ?? 0;
  const resets = new Date(err.resetsAt).toISOString().replace("T", " ").slice(0, 16);
  return new DimsumError(
    "rate_limited",
    `${whose(b, scope)} ${b.period === "day" ? "daily" : "monthly"} budget of ${amount(b, limit)} is spent (${amount(b, err.spent)} used, about ${amount(b, err.expected)} more expected for this answer), so this answer was not started; it resets at ${resets} UTC`,
    { hint: "an owner or admin can raise the budget in Settings → Spend" },
  );
}

/** The notice of a soft limit passed. */
export function budgetNoticeOf(passed: SoftLimitPassed, at: number): BudgetNotice {
  const b = passed.budget;
  return {
    budgetId: b.id,
    scope: b.scope,
    scopeId: b.scopeId,
    period: b.period,
    unit: b.unit,
    softLimit: b.softLimit ?? 0,
    hardLimit: b.hardLimit,
    spent: passed.spent,
    cheaperModel: b.cheaperModel,
    at,
  };
}

/** Admits turns under the stored budgets. */
export class BudgetGuard {
  /** `onSoftLimit`: told once when a model call takes a budget past its soft limit. */
  constructor(
    private readonly store: BudgetStore,
    private readonly onSoftLimit?: (notice: BudgetNotice) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** Admits a turn (undefined: no budget applies); throws the refusal when a hard limit is reached. */
  async admit(scope: TurnScope): Promise<BudgetGate | undefined> {
    const budgets = await this.store.applying([
      ...(scope.person ? [{ scope: "person" as const, id: scope.person }] : []),
      { scope: "agent", id: scope.agentId },
      ...(scope.channelId ? [{ scope: "group" as const, id: scope.channelId }] : []),
    ]);
    if (budgets.length === 0) return undefined;
    let holds: BudgetHold[];
    try {
      holds = await this.store.admit(budgets, { enforce: !scope.resumed });
    } catch (err) {
      // The databases wrap what a transaction throws: the refusal is in the chain of causes.
      for (let e: unknown = err; e instanceof Error; e = e.cause) {
        if (e instanceof BudgetExceeded) throw budgetRefusal(e, scope);
      }
      throw err;
    }
    const soft = holds.find((h) => h.budget.softLimit !== null && h.spentBefore >= h.budget.softLimit);
    const cheaperModel =
      holds.find(
        (h) => h.budget.softLimit !== null && h.spentBefore >= h.budget.softLimit && h.budget.cheaperModel,
      )?.budget.cheaperModel ?? undefined;
    const total = { usd: 0, tokens: 0 };
    let costSoFar = 0;
    let passed: BudgetHold | undefined;
    const store = this.store;
    const { onSoftLimit, now } = this;
    const softReason = soft
      ? `${whose(soft.budget, scope)} ${soft.budget.period === "day" ? "daily" : "monthly"} budget passed its soft limit of ${amount(soft.budget, soft.budget.softLimit ?? 0)} (${amount(soft.budget, soft.spentBefore)} used)`
      : undefined;
    return {
      cheaperModel: soft ? cheaperModel : undefined,
      softReason,
      async counted(event) {
        const usd = event.costUsd === undefined ? 0 : Math.max(0, event.costUsd - costSoFar);
        if (event.costUsd !== undefined) costSoFar = event.costUsd;
        const tokens = event.usage.inputTokens + event.usage.outputTokens;
        total.usd += usd;
        total.tokens += tokens;
        const passedSoft = await store.charge(holds, { usd, tokens });
        for (const p of passedSoft) onSoftLimit?.(budgetNoticeOf(p, now()));
        passed ??= holds.find(
          (h) => h.budget.hardLimit !== null && h.spentBefore + total[h.budget.unit] >= h.budget.hardLimit,
        );
      },
      checkStep() {
        if (!passed) return;
        const b = passed.budget;
        throw new DimsumError(
          "rate_limited",
          `${whose(b, scope)} ${b.period === "day" ? "daily" : "monthly"} budget of ${amount(b, b.hardLimit ?? 0)} was reached during this answer, so it stopped after its last step`,
          { hint: "an owner or admin can raise the budget in Settings → Spend" },
        );
      },
      end: () => store.release(holds, total),
    };
  }
}
