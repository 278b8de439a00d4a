/**
 * Spend from stored usage: tokens and cost per day and provider, and per day and agent, over the
 * last 7 or 30 days. Admins see everyone's runs, others the runs they started.
 */
import { useEffect, useState } from "preact/hooks";
import { useReportError, useServices } from "../../hooks.js";
import type { SpendReport, SpendRow } from "../../types.js";
import { formatTokens, formatUsd } from "../answer-usage.js";

function SpendTable({ rows, keyLabel, testId }: { rows: SpendRow[]; keyLabel: string; testId: string }) {
  if (rows.length === 0) return <p class="muted">No answers in this period.</p>;
  return (
    <div class="table-scroll">
      <table class="table spend-table" data-testid={testId}>
        <thead>
          <tr>
            <th>Day</th>
            <th>{keyLabel}</th>
            <th class="num wide-only">Answers</th>
            <th class="num wide-only">Input</th>
            <th class="num wide-only">Cached</th>
            <th class="num">Output</th>
            <th class="num">Cost</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={`${row.day}-${row.key}`} data-testid="spend-row" data-key={row.key}>
              <td class="nowrap">{row.day}</td>
              <td>{row.key}</td>
              <td class="num wide-only">{row.runs}</td>
              <td class="num wide-only">{formatTokens(row.inputTokens)}</td>
              <td class="num wide-only">{formatTokens(row.cachedInputTokens)}</td>
              <td class="num" data-label="Output tokens">
                {formatTokens(row.outputTokens)}
              </td>
              <td
                class="num"
                data-label="Cost"
                title={row.unpriced > 0 ? `${row.unpriced} without a known price` : undefined}
              >
                {formatUsd(row.costUsd)}
                {row.unpriced > 0 ? "*" : ""}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The Spend tab. */
export function SpendSection() {
  const { api } = useServices();
  const report = useReportError();
  const [days, setDays] = useState(30);
  const [spend, setSpend] = useState<SpendReport | undefined>(undefined);
  useEffect(() => {
    api.spend(days).then(setSpend).catch(report);
  }, [api, days]);
  return (
    <div class="settings-section spend-section" data-testid="spend-section">
      <p class="muted">
        {spend?.scope === "all" ? "Every answer in the team" : "The answers to your messages"}, from stored
        usage; cost at the models' prices (* some answers had no known price).
      </p>
      <div class="spend-controls">
        <label>
          Period{" "}
          <select
            value={String(days)}
            onChange={(e) => setDays(Number(e.currentTarget.value))}
            data-testid="spend-days"
          >
            <option value="7">last 7 days</option>
            <option value="30">last 30 days</option>
            <option value="90">last 90 days</option>
          </select>
        </label>
        {spend && (
          <span class="spend-total" data-testid="spend-total">
            {spend.totals.runs} answers · {formatTokens(spend.totals.inputTokens)} in (
            {formatTokens(spend.totals.cachedInputTokens)} cached) · {formatTokens(spend.totals.outputTokens)}{" "}
            out · <strong>{formatUsd(spend.totals.costUsd)}</strong>
          </span>
        )}
      </div>
      {spend ? (
        <>
          <h3>Per provider</h3>
          <SpendTable rows={spend.byProvider} keyLabel="Provider" testId="spend-by-provider" />
          <h3>Per agent</h3>
          <SpendTable rows={spend.byAgent} keyLabel="Agent" testId="spend-by-agent" />
        </>
      ) : (
        <p class="muted">Loading…</p>
      )}
    </div>
  );
}
