/**
 * Budgets on the Spend tab: everyone sees their own (spent and remaining this period); owners and
 * admins see every budget, add one for a person, an agent or a group, and remove it.
 */

import { useEffect, useState } from "preact/hooks";
import { formatTime } from "../../format.js";
import { useAction, useReportError, useServices } from "../../hooks.js";
import { type MessageKey, t } from "../../i18n/index.js";
import type { BudgetInput, BudgetStatus } from "../../types.js";
import { formatTokens, formatUsd } from "../answer-usage.js";

function amount(unit: BudgetStatus["unit"], value: number | null): string {
  if (value === null) return "—";
  return unit === "usd" ? formatUsd(value) : formatTokens(value);
}

const SCOPES: ReadonlyArray<{ id: BudgetInput["scope"]; label: MessageKey }> = [
  { id: "person", label: "settings.budgets.scope.person" },
  { id: "agent", label: "settings.budgets.scope.agent" },
  { id: "group", label: "settings.budgets.scope.group" },
];

function BudgetTable({
  budgets,
  onDelete,
  testId,
}: {
  budgets: BudgetStatus[];
  onDelete?: (id: string) => void;
  testId: string;
}) {
  return (
    <div class="table-scroll">
      <table class="table" data-testid={testId}>
        <thead>
          <tr>
            {onDelete && <th>{t("settings.budgets.for")}</th>}
            <th>{t("settings.budgets.period")}</th>
            <th class="num">{t("settings.budgets.soft")}</th>
            <th class="num">{t("settings.budgets.hard")}</th>
            <th class="num">{t("settings.budgets.spent")}</th>
            <th class="num">{t("settings.budgets.remaining")}</th>
            <th class="wide-only">{t("settings.budgets.resets")}</th>
            {onDelete && <th />}
          </tr>
        </thead>
        <tbody>
          {budgets.map((b) => (
            <tr key={b.id} data-testid="budget-row" data-budget-id={b.id}>
              {onDelete && (
                <td>
                  {t(SCOPES.find((s) => s.id === b.scope)?.label ?? "settings.budgets.scope.person")}{" "}
                  <code>{b.scopeId}</code>
                  {b.cheaperModel ? (
                    <div class="muted">{t("settings.budgets.cheaperThen", { model: b.cheaperModel })}</div>
                  ) : null}
                </td>
              )}
              <td>{b.period === "day" ? t("settings.budgets.day") : t("settings.budgets.month")}</td>
              <td class="num">{amount(b.unit, b.softLimit)}</td>
              <td class="num">{amount(b.unit, b.hardLimit)}</td>
              <td class="num">{amount(b.unit, b.spent)}</td>
              <td class="num" data-testid="budget-remaining">
                {amount(b.unit, b.remaining)}
                {b.softLimit !== null && b.spent >= b.softLimit ? (
                  <div class="run-error" data-testid="budget-soft-passed">
                    {t("settings.budgets.softPassed", { soft: amount(b.unit, b.softLimit) })}
                  </div>
                ) : null}
              </td>
              <td class="wide-only">{formatTime(b.resetsAt)}</td>
              {onDelete && (
                <td>
                  <button
                    type="button"
                    class="btn btn-small btn-danger"
                    onClick={() => onDelete(b.id)}
                    data-testid="budget-delete"
                  >
                    {t("settings.budgets.remove")}
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function AddBudget({ onAdded }: { onAdded: () => void }) {
  const { api } = useServices();
  const [scope, setScope] = useState<BudgetInput["scope"]>("person");
  const [scopeId, setScopeId] = useState("");
  const [period, setPeriod] = useState<BudgetInput["period"]>("month");
  const [unit, setUnit] = useState<BudgetInput["unit"]>("usd");
  const [soft, setSoft] = useState("");
  const [hard, setHard] = useState("");
  const [cheaper, setCheaper] = useState("");
  const [add, adding] = useAction(async () => {
    await api.createBudget({
      scope,
      scopeId: scopeId.trim(),
      period,
      unit,
      softLimit: soft === "" ? null : Number(soft),
      hardLimit: hard === "" ? null : Number(hard),
      cheaperModel: cheaper.trim() === "" ? null : cheaper.trim(),
    });
    setScopeId("");
    setSoft("");
    setHard("");
    setCheaper("");
    onAdded();
  }, t("settings.budgets.added"));
  return (
    <form
      class="inline-form budget-form"
      onSubmit={(e) => {
        e.preventDefault();
        void add();
      }}
    >
      <select
        value={scope}
        onChange={(e) => setScope(e.currentTarget.value as BudgetInput["scope"])}
        data-testid="budget-scope"
        aria-label={t("settings.budgets.for")}
      >
        {SCOPES.map((s) => (
          <option key={s.id} value={s.id}>
            {t(s.label)}
          </option>
        ))}
      </select>
      <input
        value={scopeId}
        required
        placeholder={t("settings.budgets.idPlaceholder")}
        onInput={(e) => setScopeId(e.currentTarget.value)}
        data-testid="budget-scope-id"
      />
      <select
        value={period}
        onChange={(e) => setPeriod(e.currentTarget.value as BudgetInput["period"])}
        data-testid="budget-period"
        aria-label={t("settings.budgets.period")}
      >
        <option value="day">{t("settings.budgets.day")}</option>
        <option value="month">{t("settings.budgets.month")}</option>
      </select>
      <select
        value={unit}
        onChange={(e) => setUnit(e.currentTarget.value as BudgetInput["unit"])}
        data-testid="budget-unit"
        aria-label={t("settings.budgets.unit")}
      >
        <option value="usd">{t("settings.budgets.usd")}</option>
        <option value="tokens">{t("settings.budgets.tokens")}</option>
      </select>
      <input
        type="number"
        min={0}
        step="any"
        value={soft}
        placeholder={t("settings.budgets.soft")}
        onInput={(e) => setSoft(e.currentTarget.value)}
        data-testid="budget-soft"
      />
      <input
        type="number"
        min={0}
        step="any"
        value={hard}
        placeholder={t("settings.budgets.hard")}
        onInput={(e) => setHard(e.currentTarget.value)}
        data-testid="budget-hard"
      />
      <input
        value={cheaper}
        placeholder={t("settings.budgets.cheaperPlaceholder")}
        onInput={(e) => setCheaper(e.currentTarget.value)}
        data-testid="budget-cheaper"
      />
      <button
        type="submit"
        class="btn btn-primary btn-small"
        disabled={adding || scopeId.trim() === "" || (soft === "" && hard === "")}
        data-testid="budget-add"
      >
        {t("settings.budgets.add")}
      </button>
    </form>
  );
}

/** The budgets part of the Spend tab. */
export function BudgetsPanel({ isAdmin }: { isAdmin: boolean }) {
  const { api } = useServices();
  const report = useReportError();
  const [mine, setMine] = useState<BudgetStatus[] | undefined>(undefined);
  const [all, setAll] = useState<BudgetStatus[] | undefined>(undefined);
  const reload = () => {
    api.myBudgets().then(setMine).catch(report);
    if (isAdmin) api.budgets().then(setAll).catch(report);
  };
  useEffect(reload, [api, isAdmin]);
  const [remove] = useAction(async (id: string) => {
    await api.deleteBudget(id);
    reload();
  }, t("settings.budgets.removed"));
  return (
    <div class="budgets-panel" data-testid="budgets-panel">
      <h3>{t("settings.budgets.mine")}</h3>
      {mine === undefined ? (
        <p class="muted">{t("common.loading")}</p>
      ) : mine.length === 0 ? (
        <p class="muted">{t("settings.budgets.noneMine")}</p>
      ) : (
        <BudgetTable budgets={mine} testId="my-budgets" />
      )}
      {isAdmin && (
        <>
          <h3>{t("settings.budgets.all")}</h3>
          <p class="muted">{t("settings.budgets.intro")}</p>
          {all && all.length > 0 && (
            <BudgetTable budgets={all} onDelete={(id) => void remove(id)} testId="all-budgets" />
          )}
          <AddBudget onAdded={reload} />
        </>
      )}
    </div>
  );
}
