/**
 * Under an answer: the model that gave it and, behind a details toggle, its tokens (input, of which
 * cached, output), cost and duration. Also the totals of a chat.
 */

import { t } from "../i18n/index.js";
import type { TeamRun } from "../types.js";

/** `$0.0123`, with more digits for tiny amounts; `—` when the price is unknown. */
export function formatUsd(usd: number | undefined): string {
  if (usd === undefined) return "—";
  if (usd === 0) return "$0";
  if (usd < 0.01) return `$${usd.toFixed(5)}`;
  return `$${usd.toFixed(usd < 1 ? 4 : 2)}`;
}

export function formatTokens(n: number): string {
  return n >= 10_000 ? `${(n / 1000).toFixed(1)}k` : n.toLocaleString("en-US");
}

function formatDuration(ms: number): string {
  return ms < 60_000
    ? t("usage.seconds", { s: (ms / 1000).toFixed(1) })
    : t("usage.minutes", { m: String(Math.floor(ms / 60_000)), s: String(Math.round((ms % 60_000) / 1000)) });
}

/** The model name without its provider, for the answer's line. */
function shortModel(model: string): string {
  const at = model.indexOf(":");
  return at > 0 ? model.slice(at + 1) : model;
}

export function AnswerUsage({ run }: { run: TeamRun }) {
  const usage = run.usage;
  return (
    <details class="answer-usage" data-testid="answer-usage">
      <summary>
        <span class="answer-model" data-testid="answer-model" title={run.model}>
          {run.model ? shortModel(run.model) : t("usage.modelUnknown")}
        </span>
        <span class="answer-usage-toggle muted">{t("usage.details")}</span>
      </summary>
      <dl class="answer-usage-grid" data-testid="answer-usage-details">
        {run.model && (
          <>
            <dt>{t("usage.model")}</dt>
            <dd>{run.model}</dd>
          </>
        )}
        {usage && (
          <>
            <dt>{t("usage.input")}</dt>
            <dd data-testid="usage-input">{t("usage.tokens", { n: formatTokens(usage.inputTokens) })}</dd>
            <dt>{t("usage.cached")}</dt>
            <dd data-testid="usage-cached">
              {t("usage.tokens", { n: formatTokens(usage.cachedInputTokens ?? 0) })}
            </dd>
            <dt>{t("usage.output")}</dt>
            <dd data-testid="usage-output">{t("usage.tokens", { n: formatTokens(usage.outputTokens) })}</dd>
          </>
        )}
        <dt>{t("usage.cost")}</dt>
        <dd data-testid="usage-cost">{formatUsd(run.costUsd)}</dd>
        {run.endedAt !== undefined && (
          <>
            <dt>{t("usage.duration")}</dt>
            <dd data-testid="usage-duration">{formatDuration(run.endedAt - run.startedAt)}</dd>
          </>
        )}
      </dl>
    </details>
  );
}

/** Sums of a set of runs: tokens and cost. */
export function runTotals(runs: readonly TeamRun[]): {
  input: number;
  cached: number;
  output: number;
  cost: number;
} {
  const totals = { input: 0, cached: 0, output: 0, cost: 0 };
  for (const run of runs) {
    totals.input += run.usage?.inputTokens ?? 0;
    totals.cached += run.usage?.cachedInputTokens ?? 0;
    totals.output += run.usage?.outputTokens ?? 0;
    totals.cost += run.costUsd ?? 0;
  }
  return totals;
}

/** "1.2k in · 300 out · $0.0012" for a chat's or an agent's runs. */
export function TotalsLine({ runs, testId }: { runs: readonly TeamRun[]; testId: string }) {
  if (runs.length === 0) return null;
  const sums = runTotals(runs);
  return (
    <span class="usage-totals muted" data-testid={testId}>
      {t("usage.totals", {
        input: formatTokens(sums.input),
        cached: formatTokens(sums.cached),
        output: formatTokens(sums.output),
      })}{" "}
      {formatUsd(sums.cost)}
    </span>
  );
}
