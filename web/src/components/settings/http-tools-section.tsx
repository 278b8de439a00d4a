/**
 * Settings → HTTP tools (owners and admins): REST endpoints described in JSON that every agent may
 * call from its next run. Those of tools/http and the config are listed read-only; those added here
 * can be edited (as JSON, the tools/http format), turned off and on, and removed. Header values (API
 * keys) are never shown: an edit leaving one as "" keeps the saved value.
 */
import { useEffect, useState } from "preact/hooks";
import { useAction, useReportError, useServices } from "../../hooks.js";
import { t } from "../../i18n/index.js";

interface HttpToolInfo {
  name: string;
  description: string;
  source: "file" | "settings";
  editable: boolean;
  enabled: boolean;
  definition: Record<string, unknown> | null;
  headerNames: string[];
}

const EXAMPLE = `{
  "name": "city_weather",
  "description": "The weather of a city.",
  "url": "https://api.example.com/weather",
  "query": { "city": "{{city}}" },
  "headers": { "X-Api-Key": "your key" },
  "parameters": [{ "name": "city", "type": "string", "required": true }]
}`;

/** The JSON shown for editing: the definition with each saved header as "" (kept unless replaced). */
function editText(tool: HttpToolInfo): string {
  const headers = Object.fromEntries(tool.headerNames.map((h) => [h, ""]));
  return JSON.stringify({ ...tool.definition, ...(tool.headerNames.length > 0 ? { headers } : {}) }, null, 2);
}

export function HttpToolsSection() {
  const { api } = useServices();
  const report = useReportError();
  const [tools, setTools] = useState<HttpToolInfo[] | undefined>(undefined);
  const [editing, setEditing] = useState<string | undefined>(undefined);
  const [text, setText] = useState(EXAMPLE);
  const reload = () => api.request<HttpToolInfo[]>("GET", "/api/http-tools").then(setTools).catch(report);
  useEffect(() => {
    void reload();
  }, [api]);

  const [save, saving] = useAction(
    async () => {
      let definition: unknown;
      try {
        definition = JSON.parse(text);
      } catch (err) {
        throw new Error(t("httpTools.badJson", { error: (err as Error).message }));
      }
      if (editing)
        await api.request("PATCH", `/api/http-tools/${encodeURIComponent(editing)}`, { definition });
      else await api.request("POST", "/api/http-tools", definition);
      setEditing(undefined);
      setText(EXAMPLE);
      await reload();
      return true;
    },
    () => t("httpTools.saved"),
  );
  const [toggle, toggling] = useAction(async (tool: HttpToolInfo) => {
    await api.request("PATCH", `/api/http-tools/${encodeURIComponent(tool.name)}`, {
      enabled: !tool.enabled,
    });
    await reload();
  });
  const [remove, removing] = useAction(
    async (tool: HttpToolInfo) => {
      await api.request("DELETE", `/api/http-tools/${encodeURIComponent(tool.name)}`);
      await reload();
      return tool.name;
    },
    (name) => t("httpTools.removed", { name }),
  );

  return (
    <section class="form" data-testid="settings-http-tools">
      <h3>{t("settings.tab.httpTools")}</h3>
      <p class="muted">{t("httpTools.intro")}</p>
      {tools === undefined ? (
        <p class="muted">{t("httpTools.loading")}</p>
      ) : tools.length === 0 ? (
        <p class="muted" data-testid="http-tools-empty">
          {t("httpTools.empty")}
        </p>
      ) : (
        <ul class="remote-agent-list">
          {tools.map((tool) => (
            <li key={tool.name} class="remote-agent" data-testid="http-tool" data-http-tool={tool.name}>
              <div class="remote-agent-head">
                <strong>{tool.name}</strong>
                {tool.headerNames.length > 0 && <span class="badge">{t("httpTools.keySaved")}</span>}
                {!tool.enabled && <span class="badge">{t("httpTools.off")}</span>}
                {tool.editable ? (
                  <span class="remote-agent-actions">
                    <button
                      type="button"
                      class="btn btn-small"
                      onClick={() => {
                        setEditing(tool.name);
                        setText(editText(tool));
                      }}
                      data-testid="http-tool-edit"
                    >
                      {t("httpTools.edit")}
                    </button>
                    <button
                      type="button"
                      class="btn btn-small"
                      disabled={toggling}
                      onClick={() => void toggle(tool)}
                    >
                      {tool.enabled ? t("httpTools.turnOff") : t("httpTools.turnOn")}
                    </button>
                    <button
                      type="button"
                      class="btn btn-small btn-danger"
                      disabled={removing}
                      onClick={() => void remove(tool)}
                      data-testid="http-tool-remove"
                    >
                      {t("httpTools.remove")}
                    </button>
                  </span>
                ) : (
                  <span class="muted remote-agent-actions">{t("httpTools.fromFile")}</span>
                )}
              </div>
              <span class="remote-agent-description">{tool.description}</span>
            </li>
          ))}
        </ul>
      )}
      <h4>{editing ? t("httpTools.editing", { name: editing }) : t("httpTools.add")}</h4>
      <p class="muted">{t("httpTools.formatHint")}</p>
      <textarea
        rows={12}
        value={text}
        onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
        aria-label={t("httpTools.definition")}
        data-testid="http-tool-definition"
        spellcheck={false}
      />
      <div class="form-actions">
        <button
          type="button"
          class="btn btn-primary"
          disabled={saving}
          onClick={() => void save()}
          data-testid="http-tool-save"
        >
          {t("httpTools.save")}
        </button>
        {editing && (
          <button
            type="button"
            class="btn"
            onClick={() => {
              setEditing(undefined);
              setText(EXAMPLE);
            }}
          >
            {t("httpTools.cancel")}
          </button>
        )}
      </div>
    </section>
  );
}
