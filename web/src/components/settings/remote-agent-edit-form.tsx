/**
 * Settings → Remote agents → Edit: a saved agent's URL, its token (a new one replaces the saved one,
 * which is never shown; or it is removed) and its description. The name (its tool) stays.
 */

import { useState } from "preact/hooks";
import { errorText } from "../../api.js";
import { useServices } from "../../hooks.js";
import { t } from "../../i18n/index.js";
import type { RemoteAgentInfo, RemoteAgentPatch } from "../../types.js";

export function RemoteAgentEditForm({
  agent,
  onDone,
}: {
  agent: RemoteAgentInfo;
  /** Called with what was saved (a line for the person), or undefined when cancelled. */
  onDone: (saved: string | undefined) => Promise<unknown>;
}) {
  const { api } = useServices();
  const [url, setUrl] = useState(agent.url);
  const [token, setToken] = useState("");
  const [dropToken, setDropToken] = useState(false);
  const [description, setDescription] = useState(agent.description ?? "");
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  const save = async () => {
    const patch: RemoteAgentPatch = {};
    if (url.trim() !== agent.url) patch.url = url.trim();
    if (dropToken) patch.token = null;
    else if (token.trim() !== "") patch.token = token.trim();
    if (description.trim() !== (agent.description ?? "")) patch.description = description.trim() || null;
    if (Object.keys(patch).length === 0) return void onDone(undefined);
    setError(undefined);
    setBusy(true);
    try {
      await api.updateRemoteAgent(agent.name, patch);
      await onDone(t("settings.remoteAgents.edit.saved", { name: agent.name }));
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      class="form remote-agent-edit"
      data-testid="remote-agent-edit-form"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <label class="field">
        <span>{t("settings.remoteAgents.edit.url")}</span>
        <input
          value={url}
          required
          onInput={(e) => setUrl(e.currentTarget.value)}
          data-testid="remote-agent-edit-url"
        />
      </label>
      <label class="field">
        <span>
          {!agent.hasToken
            ? t("settings.remoteAgents.edit.tokenOptional")
            : originOf(url) !== originOf(agent.url)
              ? t("settings.remoteAgents.edit.tokenNewHost")
              : t("settings.remoteAgents.edit.tokenNew")}
        </span>
        <input
          type="password"
          autocomplete="off"
          value={token}
          disabled={dropToken}
          onInput={(e) => setToken(e.currentTarget.value)}
          data-testid="remote-agent-edit-token"
        />
      </label>
      {agent.hasToken && (
        <label class="check">
          <input
            type="checkbox"
            checked={dropToken}
            onChange={(e) => setDropToken(e.currentTarget.checked)}
            data-testid="remote-agent-edit-drop-token"
          />
          {t("settings.remoteAgents.edit.dropToken")}
        </label>
      )}
      <label class="field">
        <span>{t("settings.remoteAgents.edit.description")}</span>
        <input
          value={description}
          onInput={(e) => setDescription(e.currentTarget.value)}
          data-testid="remote-agent-edit-description"
        />
      </label>
      {error && (
        <p class="form-error" role="alert" data-testid="remote-agent-edit-error">
          {error}
        </p>
      )}
      <div class="form-actions">
        <button type="button" class="btn btn-small" onClick={() => void onDone(undefined)}>
          {t("common.cancel")}
        </button>
        <button
          type="submit"
          class="btn btn-primary btn-small"
          disabled={busy}
          data-testid="remote-agent-edit-save"
        >
          {t("settings.remoteAgents.edit.save")}
        </button>
      </div>
    </form>
  );
}

/** Scheme, host and port: the server drops a saved token when these change. */
function originOf(url: string): string {
  return URL.canParse(url) ? new URL(url).origin : url;
}
