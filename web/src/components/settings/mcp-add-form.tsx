/**
 * Settings → MCP servers → Add server: a command started on the server (stdio; only owners and
 * admins see this form) or a remote URL. The server's refusal (bad name, private URL) shows inline.
 */

import { useState } from "preact/hooks";
import { errorText } from "../../api.js";
import { useServices } from "../../hooks.js";
import { t } from "../../i18n/index.js";
import type { McpServerInput } from "../../types.js";
import { VisibilityField, type VisibilityValue, visibilityOf, visibilityPatch } from "../visibility-field.js";

/** `KEY=value` lines into a map; a line without `=` is an error. */
function parseEnv(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split("\n").map((l) => l.trim())) {
    if (!line) continue;
    const at = line.indexOf("=");
    if (at <= 0) throw new Error(t("settings.mcp.add.envLine", { line }));
    env[line.slice(0, at).trim()] = line.slice(at + 1);
  }
  return env;
}

const lines = (text: string) =>
  text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);

export function McpAddForm({ onAdded }: { onAdded: () => Promise<unknown> }) {
  const { api } = useServices();
  const [transport, setTransport] = useState<"stdio" | "remote">("stdio");
  const [name, setName] = useState("");
  const [command, setCommand] = useState("");
  const [args, setArgs] = useState("");
  const [env, setEnv] = useState("");
  const [url, setUrl] = useState("");
  const [perPerson, setPerPerson] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [visibility, setVisibility] = useState<VisibilityValue>(() => visibilityOf(undefined));

  const submit = async () => {
    setError(undefined);
    setBusy(true);
    try {
      const server: McpServerInput =
        transport === "stdio"
          ? {
              name: name.trim(),
              transport: "stdio",
              command: command.trim(),
              args: lines(args),
              env: parseEnv(env),
            }
          : { name: name.trim(), url: url.trim(), ...(perPerson ? { oauth: {} } : {}) };
      await api.addMcp({ ...server, ...visibilityPatch(visibility, undefined) });
      setName("");
      setCommand("");
      setArgs("");
      setEnv("");
      setUrl("");
      setVisibility(visibilityOf(undefined));
      await onAdded();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      class="form mcp-add"
      data-testid="mcp-add-form"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <h4>{t("settings.mcp.add.title")}</h4>
      <label class="field">
        <span>{t("settings.mcp.add.kind")}</span>
        <select
          value={transport}
          onChange={(e) => setTransport(e.currentTarget.value as "stdio" | "remote")}
          data-testid="mcp-add-transport"
        >
          <option value="stdio">{t("settings.mcp.add.stdio")}</option>
          <option value="remote">{t("settings.mcp.add.remote")}</option>
        </select>
      </label>
      <label class="field">
        <span>{t("settings.mcp.add.name")}</span>
        <input
          value={name}
          required
          placeholder={t("settings.mcp.add.namePlaceholder")}
          onInput={(e) => setName(e.currentTarget.value)}
          data-testid="mcp-add-name"
        />
      </label>
      {transport === "stdio" ? (
        <>
          <label class="field">
            <span>{t("settings.mcp.add.command")}</span>
            <input
              value={command}
              required
              placeholder={t("settings.mcp.add.commandPlaceholder")}
              onInput={(e) => setCommand(e.currentTarget.value)}
              data-testid="mcp-add-command"
            />
          </label>
          <label class="field">
            <span>{t("settings.mcp.add.args")}</span>
            <textarea
              value={args}
              rows={3}
              onInput={(e) => setArgs(e.currentTarget.value)}
              data-testid="mcp-add-args"
            />
          </label>
          <label class="field">
            <span>{t("settings.mcp.add.env")}</span>
            <textarea
              value={env}
              rows={2}
              onInput={(e) => setEnv(e.currentTarget.value)}
              data-testid="mcp-add-env"
            />
          </label>
        </>
      ) : (
        <>
          <label class="field">
            <span>{t("settings.mcp.add.url")}</span>
            <input
              value={url}
              required
              type="url"
              placeholder="https://mcp.example.com/mcp"
              onInput={(e) => setUrl(e.currentTarget.value)}
              data-testid="mcp-add-url"
            />
          </label>
          <label class="check">
            <input
              type="checkbox"
              checked={perPerson}
              onChange={(e) => setPerPerson(e.currentTarget.checked)}
              data-testid="mcp-add-oauth"
            />
            {t("settings.mcp.add.oauth")}
          </label>
        </>
      )}
      <VisibilityField
        resource={undefined}
        value={visibility}
        onChange={setVisibility}
        name="mcpAddVisibility"
        testId="mcp-add-visibility"
      />
      {error && (
        <p class="form-error" role="alert" data-testid="mcp-add-error">
          {error}
        </p>
      )}
      <div class="inline-form">
        <button type="submit" class="btn btn-primary btn-small" disabled={busy} data-testid="mcp-add-submit">
          {t("settings.mcp.add.title")}
        </button>
      </div>
    </form>
  );
}
