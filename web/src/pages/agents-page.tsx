/** Agents: the list (with persona warnings) beside the editor of the selected or new agent. */
import { useEffect, useState } from "preact/hooks";
import { AgentForm } from "../components/agent-form.js";
import { formatUsd } from "../components/answer-usage.js";
import { Link } from "../components/link.js";
import { VisibilityBadge } from "../components/visibility-field.js";
import { useSelector, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import type { AgentWithSoul, SessionUser, SpendReport } from "../types.js";

/** Each agent's cost over the last 30 days, from the spend report (everyone's for admins, else one's own). */
function useAgentSpend(): Map<string, number> {
  const { api } = useServices();
  const [spend, setSpend] = useState<SpendReport | undefined>(undefined);
  useEffect(() => {
    api.spend(30).then(setSpend, () => undefined);
  }, [api]);
  const totals = new Map<string, number>();
  for (const row of spend?.byAgent ?? []) totals.set(row.key, (totals.get(row.key) ?? 0) + row.costUsd);
  return totals;
}

export interface AgentsPageProps {
  /** The agent being edited, "new", or undefined for the list only. */
  selected: string | "new" | undefined;
  me: SessionUser;
}

/** The agents page. */
export function AgentsPage({ selected, me }: AgentsPageProps) {
  const agents = useSelector((s) => s.agents) as AgentWithSoul[];
  const loaded = useSelector((s) => s.agentsLoaded);
  const canManage = me.role === "owner" || me.role === "admin";
  const agent = selected && selected !== "new" ? agents.find((a) => a.id === selected) : undefined;
  const spend = useAgentSpend();
  return (
    <section class={`page split${selected ? " has-detail" : ""}`} data-testid="agents-page">
      <div class="split-list">
        <header class="page-head">
          <h2>{t("agents.title")}</h2>
          {canManage && (
            <Link to={{ name: "agent_new" }} class="btn btn-primary btn-small" testId="agent-new">
              {t("agents.new")}
            </Link>
          )}
          {me.role !== "guest" && (
            <Link to={{ name: "templates" }} class="btn btn-small" testId="agents-templates">
              {t("agents.templates")}
            </Link>
          )}
        </header>
        {!loaded && <p class="muted">{t("common.loading")}</p>}
        <ul class="agent-list" data-testid="agent-list">
          {agents.map((a) => (
            <li key={a.id}>
              <Link
                to={{ name: "agent", agentId: a.id }}
                class={`agent-link${a.id === selected ? " active" : ""}`}
                testId={`agent-item-${a.id}`}
              >
                <span class="avatar" aria-hidden="true">
                  {a.emoji}
                </span>
                <span class="agent-link-text">
                  <strong>
                    {a.name}
                    <VisibilityBadge resource={a} />
                  </strong>{" "}
                  <code>@{a.id}</code>
                  <span class="muted agent-model">
                    {a.model ?? t("agents.defaultModel")}
                    {spend.has(a.id) && (
                      <span data-testid="agent-spend" title={t("agents.spendTitle")}>
                        {" "}
                        · {t("agents.spend30", { cost: formatUsd(spend.get(a.id)) })}
                      </span>
                    )}
                  </span>
                </span>
                {a.soulStatus && a.soulStatus !== "ok" && (
                  <span
                    class="badge badge-warning"
                    title={t(a.soulStatus === "empty" ? "agents.soulEmptyTitle" : "agents.soulMissingTitle")}
                    data-testid="agent-soul-warning"
                  >
                    ⚠ {t(a.soulStatus === "empty" ? "agents.soulBadgeEmpty" : "agents.soulBadgeMissing")}
                  </span>
                )}
              </Link>
            </li>
          ))}
        </ul>
      </div>
      <div class="split-detail">
        {selected && (
          <Link to={{ name: "agents" }} class="back-link" testId="agents-back">
            {t("agents.back")}
          </Link>
        )}
        {selected === "new" ? (
          <AgentForm agent={undefined} canManage={canManage} />
        ) : agent ? (
          <AgentForm agent={agent} canManage={canManage} />
        ) : selected ? (
          <p class="muted">{loaded ? t("agents.notFound", { id: selected }) : t("common.loading")}</p>
        ) : (
          <p class="muted placeholder">{canManage ? t("agents.pickOrCreate") : t("agents.pick")}</p>
        )}
      </div>
    </section>
  );
}
