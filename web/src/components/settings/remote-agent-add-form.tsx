/**
 * Settings → Remote agents → Add agent: a name (the tool is `a2a_<name>`), the agent's URL (its card
 * or the base its `/.well-known/agent-card.json` is under), an optional bearer token (sealed on the
 * server, never shown again) and a description for the calling agents. Refusals show inline.
 */

import { useState } from "preact/hooks";
import { errorText } from "../../api.js";
import { useServices } from "../../hooks.js";
import { t } from "../../i18n/index.js";

/** The tool agents call a remote agent by. */
export function toolNameOf(name: string): string {
  return `a2a_${name.replaceAll("-", "_")}`;
}

export function RemoteAgentAddForm({ onAdded }: { onAdded: () => Promise<unknown> }) {
  const { api } = useServices();
  const [name, setName] = useState("");
  const [url, setUrl] = useState("");
  const [token, setToken] = useState("");
  const [description, setDescription] = useState("");
  const [error, setError] = useState<string | undefined>(undefined);
  const [added, setAdded] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  const submit = async () => {
    setError(undefined);
    setAdded(undefined);
    setBusy(true);
    try {
      const agent = await api.addRemoteAgent({
        name: name.trim(),
        url: url.trim(),
        ...(token.trim() ? { token: token.trim() } : {}),
        ...(description.trim() ? { description: description.trim() } : {}),
      });
      setName("");
      setUrl("");
      setToken("");
      setDescription("");
      setAdded(
        agent.hasToken
          ? t("settings.remoteAgents.add.addedWithToken", { name: agent.name, tool: toolNameOf(agent.name) })
          : t("settings.remoteAgents.add.added", { name: agent.name, tool: toolNameOf(agent.name) }),
      );
      await onAdded();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      class="form remote-agent-add"
      data-testid="remote-agent-add-form"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <h4>{t("settings.remoteAgents.add.title")}</h4>
      <label class="field">
        <span>{t("settings.remoteAgents.add.name")}</span>
        <input
          value={name}
          required
          placeholder={t("settings.remoteAgents.add.namePlaceholder")}
          onInput={(e) => setName(e.currentTarget.value)}
          data-testid="remote-agent-add-name"
        />
      </label>
      <label class="field">
        <span>{t("settings.remoteAgents.add.url")}</span>
        <input
          value={url}
          required
          type="url"
          placeholder="https://agents.example.com/a2a/research"
          onInput={(e) => setUrl(e.currentTarget.value)}
          data-testid="remote-agent-add-url"
        />
      </label>
      <label class="field">
        <span>{t("settings.remoteAgents.add.token")}</span>
        <input
          value={token}
          type="password"
          autoComplete="off"
          onInput={(e) => setToken(e.currentTarget.value)}
          data-testid="remote-agent-add-token"
        />
      </label>
      <label class="field">
        <span>{t("settings.remoteAgents.add.description")}</span>
        <input
          value={description}
          placeholder={t("settings.remoteAgents.add.descriptionPlaceholder")}
          onInput={(e) => setDescription(e.currentTarget.value)}
          data-testid="remote-agent-add-description"
        />
      </label>
      {error && (
        <p class="form-error" role="alert" data-testid="remote-agent-add-error">
          {error}
        </p>
      )}
      {added && (
        <p class="notice notice-info" role="status" data-testid="remote-agent-added">
          {added}
        </p>
      )}
      <div class="inline-form">
        <button
          type="submit"
          class="btn btn-primary btn-small"
          disabled={busy}
          data-testid="remote-agent-add-submit"
        >
          {t("settings.remoteAgents.add.title")}
        </button>
      </div>
    </form>
  );
}
