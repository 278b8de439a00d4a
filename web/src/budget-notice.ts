/**
 * The line a budget notice shows (a live `budget_notice` frame): whose budget passed its soft limit,
 * by how much, and the cheaper model the next answers use. The person limited reads "your"; owners
 * and admins read the account's name when the state knows it (else its id), the agent or the group.
 */
import { t } from "./i18n/index.js";
import type { AppState } from "./state/app.js";
import type { BudgetNotice } from "./types.js";

/** `$0.006`, `$1.25` or `12,000 tokens` (as the chat's answers show amounts). */
function amount(notice: BudgetNotice, value: number): string {
  if (notice.unit === "tokens") return `${Math.round(value).toLocaleString("en-US")} tokens`;
  const digits = value < 1 ? 4 : 2;
  return `$${value.toFixed(digits).replace(/\.?0+$/, "")}`;
}

function whose(notice: BudgetNotice, state: AppState): string | undefined {
  const me = state.auth.phase === "ready" ? state.auth.user.id : undefined;
  if (notice.scope === "person") return notice.scopeId === me ? undefined : notice.scopeId;
  if (notice.scope === "agent")
    return `@${state.agents.find((a) => a.id === notice.scopeId)?.name ?? notice.scopeId}`;
  return state.channels.list.find((c) => c.id === notice.scopeId)?.name ?? notice.scopeId;
}

/** What the notice says to the signed-in person. */
export function budgetNoticeText(notice: BudgetNotice, state: AppState): string {
  const params = {
    period: t(notice.period === "day" ? "budget.notice.daily" : "budget.notice.monthly"),
    soft: amount(notice, notice.softLimit),
    spent: amount(notice, notice.spent),
  };
  const who = whose(notice, state);
  const line =
    who === undefined ? t("budget.notice.yours", params) : t("budget.notice.theirs", { ...params, who });
  return notice.cheaperModel ? `${line} ${t("budget.notice.cheaper", { model: notice.cheaperModel })}` : line;
}
