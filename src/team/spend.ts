/**
 * Spend from stored usage: the runs' tokens and cost summed per day (UTC) and provider, and per day
 * and agent. Runs stored before their cost was kept count their tokens with no cost.
 */
import type { TeamRun } from "./types.js";

export interface SpendRow {
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  /** The provider (`openai`, `anthropic`, …) or the agent id, depending on the table. */
  key: string;
  runs: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  /** USD; runs whose model has no known price add nothing. */
  costUsd: number;
  /** Runs without a known cost among `runs`. */
  unpriced: number;
}

export interface SpendReport {
  /** First day counted (epoch ms, start of a UTC day). */
  since: number;
  /** Whose runs: every run (`all`, admins) or the runs the caller started (`own`). */
  scope: "all" | "own";
  byProvider: SpendRow[];
  byAgent: SpendRow[];
  totals: Omit<SpendRow, "day" | "key">;
}

function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function emptyRow(day: string, key: string): SpendRow {
  return {
    day,
    key,
    runs: 0,
    inputTokens: 0,
    cachedInputTokens: 0,
    outputTokens: 0,
    costUsd: 0,
    unpriced: 0,
  };
}

function add(row: Omit<SpendRow, "day" | "key">, run: TeamRun): void {
  row.runs++;
  row.inputTokens += run.usage?.inputTokens ?? 0;
  row.cachedInputTokens += run.usage?.cachedInputTokens ?? 0;
  row.outputTokens += run.usage?.outputTokens ?? 0;
  if (run.costUsd === undefined) row.unpriced++;
  else row.costUsd += run.costUsd;
}

function table(runs: readonly TeamRun[], keyOf: (run: TeamRun) => string): SpendRow[] {
  const rows = new Map<string, SpendRow>();
  for (const run of runs) {
    const day = dayOf(run.startedAt);
    const key = keyOf(run);
    const id = `${day}\u0000${key}`;
    let row = rows.get(id);
    if (!row) {
      row = emptyRow(day, key);
      rows.set(id, row);
    }
    add(row, run);
  }
  // Newest day first, then the biggest spender.
  return [...rows.values()].sort((a, b) =>
    a.day === b.day ? b.costUsd - a.costUsd || a.key.localeCompare(b.key) : a.day < b.day ? 1 : -1,
  );
}

/** The provider part of `provider:model`; `unknown` for runs stored before the model was kept. */
export function providerOf(run: TeamRun): string {
  if (!run.model) return "unknown";
  const at = run.model.indexOf(":");
  return at > 0 ? run.model.slice(0, at) : run.model;
}

/** Sums the runs into the report. */
export function spendReport(runs: readonly TeamRun[], since: number, scope: "all" | "own"): SpendReport {
  const totals = { runs: 0, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, costUsd: 0, unpriced: 0 };
  for (const run of runs) add(totals, run);
  return {
    since,
    scope,
    byProvider: table(runs, providerOf),
    byAgent: table(runs, (run) => run.agentId),
    totals,
  };
}

/** The start (UTC midnight) of the day `days - 1` days before `now`: `days` whole days with today. */
export function sinceDays(now: number, days: number): number {
  const today = Date.UTC(
    new Date(now).getUTCFullYear(),
    new Date(now).getUTCMonth(),
    new Date(now).getUTCDate(),
  );
  return today - (days - 1) * 86_400_000;
}
