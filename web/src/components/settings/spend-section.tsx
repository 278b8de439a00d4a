/**
 * Spend from stored usage: tokens and cost per day and provider, and per day and agent, over the
 * last 7 or 30 days. Admins see everyone's runs, others the runs they started.
 */

import { useEffect, useState } from "preact/hooks";
import { useReportError, useServices } from "../../hooks.js";
import { t } from "../../i18n/index.js";
import type { SpendReport, SpendRow } from "../../types.js";
import { formatTokens, formatUsd } from "../answer-usage.js";
import { BudgetsPanel } from "./budgets-panel.js";

function SpendTable({ rows, keyLabel, testId }: { rows: SpendRow[]; keyLabel: string; testId: string }) {
  if (rows.length === 0) return <p class="muted">{t("settings.spend.empty")}</p>;
  return (
    <div class="table-scroll">
      <table class="table spend-table" data-testid={testId}>
        <thead>
          <tr>
            <th>{t("settings.spend.day")}</th>
            <th>{keyLabel}</th>
            <th class="num wide-only">{t("settings.spend.answers")}</th>
            <th class="num wide-only">{t("settings.spend.input")}</th>
            <th class="num wide-only">{t("settings.spend.cached")}</th>
            <th class="num">{t("settings.spend.output")}</th>
            <th class="num">{t("settings.spend.cost")}</th>
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
              <td class="num" data-label={t("settings.spend.outputTokens")}>
                {formatTokens(row.outputTokens)}
              </td>
              <td
                class="num"
                data-label={t("settings.spend.cost")}
                title={row.unpriced > 0 ? t("settings.spend.unpriced", { count: row.unpriced }) : undefined}
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
export function SpendSection({ isAdmin }: { isAdmin: boolean }) {
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
        {spend?.scope === "all" ? t("settings.spend.introAll") : t("settings.spend.introOwn")}
      </p>
      <div class="spend-controls">
        <label>
          {t("settings.spend.period")}{" "}
          <select
            value={String(days)}
            onChange={(e) => setDays(Number(e.currentTarget.value))}
            data-testid="spend-days"
          >
            <option value="7">{t("settings.spend.lastDays", { count: 7 })}</option>
            <option value="30">{t("settings.spend.lastDays", { count: 30 })}</option>
            <option value="90">{t("settings.spend.lastDays", { count: 90 })}</option>
          </select>
        </label>
        {spend && (
          <span class="spend-total" data-testid="spend-total">
            {t("settings.spend.totals", {
              count: spend.totals.runs,
              input: formatTokens(spend.totals.inputTokens),
              cached: formatTokens(spend.totals.cachedInputTokens),
              output: formatTokens(spend.totals.outputTokens),
            })}{" "}
            · <strong>{formatUsd(spend.totals.costUsd)}</strong>
          </span>
        )}
      </div>
      {spend ? (
        <>
          <h3>{t("settings.spend.perProvider")}</h3>
          <SpendTable
            rows={spend.byProvider}
            keyLabel={t("settings.spend.provider")}
            testId="spend-by-provider"
          />
          <h3>{t("settings.spend.perAgent")}</h3>
          <SpendTable rows={spend.byAgent} keyLabel={t("settings.spend.agent")} testId="spend-by-agent" />
        </>
      ) : (
        <p class="muted">{t("common.loading")}</p>
      )}
      <BudgetsPanel isAdmin={isAdmin} />
    </div>
  );
}
