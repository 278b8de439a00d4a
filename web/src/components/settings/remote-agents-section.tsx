/**
 * Settings → Remote agents (owners and admins): the remote A2A agents every agent may call, one tool
 * each (`a2a_<name>`). a2a.json's are listed read-only; those added here can be checked (their agent
 * card read with the saved token), edited, turned off and on, and removed. Tokens are never shown,
 * only that one is saved.
 */

import { useEffect, useState } from "preact/hooks";
import { errorText } from "../../api.js";
import { useAction, useReportError, useServices } from "../../hooks.js";
import { t } from "../../i18n/index.js";
import type { RemoteAgentCheck, RemoteAgentInfo } from "../../types.js";
import { askConfirm } from "../confirm-dialog.js";
import { RemoteAgentAddForm, toolNameOf } from "./remote-agent-add-form.js";
import { RemoteAgentEditForm } from "./remote-agent-edit-form.js";

export function RemoteAgentsSection() {
  const { api, store } = useServices();
  const report = useReportError();
  const [agents, setAgents] = useState<RemoteAgentInfo[] | undefined>(undefined);
  const [checks, setChecks] = useState<Record<string, RemoteAgentCheck | "checking">>({});
  const [editing, setEditing] = useState<string | undefined>(undefined);
  const reload = () => api.listRemoteAgents().then(setAgents).catch(report);
  useEffect(() => {
    void reload();
  }, [api]);

  const [remove, removing] = useAction(
    async (agent: RemoteAgentInfo) => {
      const yes = await askConfirm({
        title: t("settings.remoteAgents.removeTitle", { name: agent.name }),
        message: t("settings.remoteAgents.removeMessage", { tool: toolNameOf(agent.name) }),
        confirmLabel: t("settings.remoteAgents.remove"),
      });
      if (!yes) return undefined;
      await api.removeRemoteAgent(agent.name);
      await reload();
      return agent.name;
    },
    (name) => (name ? t("settings.remoteAgents.removed", { name }) : undefined),
  );

  const [toggle, toggling] = useAction(
    async (agent: RemoteAgentInfo) => {
      await api.updateRemoteAgent(agent.name, { enabled: !agent.enabled });
      await reload();
      return agent;
    },
    (agent) =>
      agent.enabled
        ? t("settings.remoteAgents.turnedOff", { name: agent.name, tool: toolNameOf(agent.name) })
        : t("settings.remoteAgents.turnedOn", { name: agent.name }),
  );

  const check = async (name: string) => {
    setChecks((all) => ({ ...all, [name]: "checking" }));
    try {
      const result = await api.checkRemoteAgent(name);
      setChecks((all) => ({ ...all, [name]: result }));
    } catch (err) {
      setChecks((all) => ({ ...all, [name]: { ok: false, error: { message: errorText(err), hint: null } } }));
    }
  };

  return (
    <section class="form" data-testid="settings-remote-agents">
      <h3>{t("settings.remoteAgents.title")}</h3>
      <p class="muted">{t("settings.remoteAgents.intro")}</p>
      {agents === undefined ? (
        <p class="muted">{t("common.loading")}</p>
      ) : agents.length === 0 ? (
        <p class="muted" data-testid="remote-agents-empty">
          {t("settings.remoteAgents.emptyBefore")} <code>a2a.json</code>{" "}
          {t("settings.remoteAgents.emptyAfter")}
        </p>
      ) : (
        <ul class="remote-agent-list">
          {agents.map((agent) => (
            <li
              key={agent.name}
              class="remote-agent"
              data-testid="remote-agent"
              data-remote-agent={agent.name}
            >
              <div class="remote-agent-head">
                <strong>{agent.name}</strong>
                <code class="muted">{toolNameOf(agent.name)}</code>
                {agent.hasToken && (
                  <span class="badge" data-testid="remote-agent-token">
                    {t("settings.remoteAgents.tokenSaved")}
                  </span>
                )}
                {!agent.enabled && <span class="badge">{t("settings.remoteAgents.disabled")}</span>}
                {agent.removable ? (
                  <span class="remote-agent-actions">
                    <button
                      type="button"
                      class="btn btn-small"
                      disabled={checks[agent.name] === "checking"}
                      onClick={() => void check(agent.name)}
                      data-testid="remote-agent-check"
                    >
                      {t("settings.remoteAgents.check")}
                    </button>
                    <button
                      type="button"
                      class="btn btn-small"
                      onClick={() => setEditing(editing === agent.name ? undefined : agent.name)}
                      data-testid="remote-agent-edit"
                    >
                      {t("settings.remoteAgents.edit")}
                    </button>
                    <button
                      type="button"
                      class="btn btn-small"
                      disabled={toggling}
                      onClick={() => void toggle(agent)}
                      data-testid="remote-agent-toggle"
                    >
                      {agent.enabled ? t("settings.remoteAgents.turnOff") : t("settings.remoteAgents.turnOn")}
                    </button>
                    <button
                      type="button"
                      class="btn btn-small btn-danger"
                      disabled={removing}
                      onClick={() => void remove(agent)}
                      data-testid="remote-agent-remove"
                    >
                      {t("settings.remoteAgents.remove")}
                    </button>
                  </span>
                ) : (
                  <span class="muted remote-agent-actions" title={t("settings.remoteAgents.editFile")}>
                    {t("settings.remoteAgents.fromFile")}
                  </span>
                )}
              </div>
              <span class="remote-agent-url muted" data-testid="remote-agent-url">
                {agent.url}
              </span>
              {agent.description && <span class="remote-agent-description">{agent.description}</span>}
              <CheckResult result={checks[agent.name]} />
              {editing === agent.name && (
                <RemoteAgentEditForm
                  agent={agent}
                  onDone={async (saved) => {
                    setEditing(undefined);
                    if (!saved) return;
                    setChecks((all) => {
                      const { [agent.name]: _, ...rest } = all;
                      return rest;
                    });
                    await reload();
                    store.dispatch({ type: "notice", kind: "info", text: saved });
                  }}
                />
              )}
            </li>
          ))}
        </ul>
      )}
      <RemoteAgentAddForm onAdded={reload} />
    </section>
  );
}

function CheckResult({ result }: { result: RemoteAgentCheck | "checking" | undefined }) {
  if (result === undefined) return null;
  if (result === "checking") return <p class="muted">{t("settings.remoteAgents.checking")}</p>;
  if (!result.ok) {
    return (
      <p class="form-error" role="alert" data-testid="remote-agent-check-result">
        {result.error.message}
        {result.error.hint ? ` (${result.error.hint})` : ""}
      </p>
    );
  }
  const { card } = result;
  return (
    <p class="notice notice-info" role="status" data-testid="remote-agent-check-result">
      {card.description
        ? t("settings.remoteAgents.reachableDescribed", { name: card.name, description: card.description })
        : t("settings.remoteAgents.reachable", { name: card.name })}{" "}
      {card.skills.length > 0
        ? t("settings.remoteAgents.skills", { skills: card.skills.map((s) => s.name).join(", ") })
        : t("settings.remoteAgents.noSkills")}
    </p>
  );
}
