/**
 * Settings → Remote agents (owners and admins): the remote A2A agents every agent may call, one tool
 * each (`a2a_<name>`). a2a.json's are listed read-only; those added here can be checked (their agent
 * card read with the saved token), edited, turned off and on, and removed. Tokens are never shown,
 * only that one is saved.
 */
import { useEffect, useState } from "preact/hooks";
import { errorText } from "../../api.js";
import { useAction, useReportError, useServices } from "../../hooks.js";
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
        title: `Remove the remote agent "${agent.name}"?`,
        message: `Agents can no longer call it (${toolNameOf(agent.name)}) from their next run. Its saved token is deleted.`,
        confirmLabel: "Remove",
      });
      if (!yes) return undefined;
      await api.removeRemoteAgent(agent.name);
      await reload();
      return agent.name;
    },
    (name) => (name ? `Removed the remote agent "${name}".` : undefined),
  );

  const [toggle, toggling] = useAction(
    async (agent: RemoteAgentInfo) => {
      await api.updateRemoteAgent(agent.name, { enabled: !agent.enabled });
      await reload();
      return agent;
    },
    (agent) =>
      agent.enabled
        ? `Turned off "${agent.name}": runs no longer offer ${toolNameOf(agent.name)}.`
        : `Turned on "${agent.name}": agents can call it from their next run.`,
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
      <h3>Remote agents</h3>
      <p class="muted">
        Agents on other systems that speak the A2A protocol. Each one becomes a tool of every agent here from
        its next run, and its answer streams into the chat as a nested run.
      </p>
      {agents === undefined ? (
        <p class="muted">Loading…</p>
      ) : agents.length === 0 ? (
        <p class="muted" data-testid="remote-agents-empty">
          No remote agents yet. Add one below, or in <code>a2a.json</code> in the Dimsum home folder.
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
                    token saved
                  </span>
                )}
                {!agent.enabled && <span class="badge">disabled</span>}
                {agent.removable ? (
                  <span class="remote-agent-actions">
                    <button
                      type="button"
                      class="btn btn-small"
                      disabled={checks[agent.name] === "checking"}
                      onClick={() => void check(agent.name)}
                      data-testid="remote-agent-check"
                    >
                      Check
                    </button>
                    <button
                      type="button"
                      class="btn btn-small"
                      onClick={() => setEditing(editing === agent.name ? undefined : agent.name)}
                      data-testid="remote-agent-edit"
                    >
                      Edit
                    </button>
                    <button
                      type="button"
                      class="btn btn-small"
                      disabled={toggling}
                      onClick={() => void toggle(agent)}
                      data-testid="remote-agent-toggle"
                    >
                      {agent.enabled ? "Turn off" : "Turn on"}
                    </button>
                    <button
                      type="button"
                      class="btn btn-small btn-danger"
                      disabled={removing}
                      onClick={() => void remove(agent)}
                      data-testid="remote-agent-remove"
                    >
                      Remove
                    </button>
                  </span>
                ) : (
                  <span class="muted remote-agent-actions" title="Edit a2a.json and restart to change it">
                    from a2a.json
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
  if (result === "checking") return <p class="muted">Reading its agent card…</p>;
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
      Reachable: “{card.name}”{card.description ? ` — ${card.description}` : ""}.{" "}
      {card.skills.length > 0
        ? `Skills: ${card.skills.map((s) => s.name).join(", ")}.`
        : "Its card lists no skills."}
    </p>
  );
}
