/** MCP servers with their connection status, and connect/disconnect buttons. */

import { useEffect, useState } from "preact/hooks";
import { useAction, useReportError, useServices } from "../../hooks.js";
import { t } from "../../i18n/index.js";
import type { McpServerInfo } from "../../types.js";
import { askConfirm } from "../confirm-dialog.js";
import { McpAddForm } from "./mcp-add-form.js";
import { McpSignIns } from "./mcp-signins.js";
import { McpVisibility } from "./mcp-visibility.js";

function toolCount(tools: McpServerInfo["tools"]): string | undefined {
  if (tools === undefined) return undefined;
  const n = Array.isArray(tools) ? tools.length : tools;
  return t("settings.mcp.toolCount", { count: n });
}

const STATUS_KEYS = {
  connecting: "settings.mcp.status.connecting",
  connected: "settings.mcp.status.connected",
  failed: "settings.mcp.status.failed",
  disabled: "settings.mcp.status.disabled",
  closed: "settings.mcp.status.closed",
  disconnected: "settings.mcp.status.disconnected",
} as const;

/** A server's status in the person's language; an unknown one as the server said it. */
function statusText(status: string): string {
  const key = STATUS_KEYS[status as keyof typeof STATUS_KEYS];
  return key ? t(key) : status;
}

/** The MCP section: owners and admins see every server; members their own sign-ins. */
export function McpSection({ isAdmin }: { isAdmin: boolean }) {
  if (!isAdmin) {
    return (
      <section class="form" data-testid="settings-mcp">
        <h3>{t("settings.mcp.accountsTitle")}</h3>
        <McpSignIns empty={t("settings.mcp.noSignIns")} />
      </section>
    );
  }
  return <McpServers />;
}

function McpServers() {
  const { api } = useServices();
  const report = useReportError();
  const [servers, setServers] = useState<McpServerInfo[] | undefined>(undefined);
  const reload = () => api.listMcp().then(setServers).catch(report);
  useEffect(() => {
    void reload();
  }, [api]);

  const [toggle, busy] = useAction(async (server: McpServerInfo) => {
    if (server.status === "connected") await api.disconnectMcp(server.name);
    else await api.connectMcp(server.name);
    await reload();
  });
  const [remove, removing] = useAction(async (server: McpServerInfo) => {
    const yes = await askConfirm({
      title: t("settings.mcp.removeTitle", { name: server.name }),
      message: t("settings.mcp.removeMessage"),
      confirmLabel: t("settings.mcp.remove"),
    });
    if (!yes) return;
    await api.removeMcp(server.name);
    await reload();
  });

  return (
    <section class="form" data-testid="settings-mcp">
      <h3>{t("settings.mcp.title")}</h3>
      {servers === undefined ? (
        <p class="muted">{t("common.loading")}</p>
      ) : servers.length === 0 ? (
        <p class="muted">
          {t("settings.mcp.emptyBefore")} <code>mcp.json</code> {t("settings.mcp.emptyAfter")}
        </p>
      ) : (
        <ul class="mcp-list">
          {servers.map((server) => (
            <li
              key={server.name}
              class="mcp-server"
              data-testid="mcp-server"
              data-mcp={server.name}
              data-status={server.status}
            >
              <strong>{server.name}</strong>
              {server.transport && <span class="muted">{server.transport}</span>}
              {!server.perPerson && (
                <span class={`badge badge-mcp-${server.status}`} data-testid="mcp-status">
                  {statusText(server.status)}
                </span>
              )}
              {!server.perPerson && toolCount(server.tools) && (
                <span class="muted">{toolCount(server.tools)}</span>
              )}
              {server.error && <span class="run-error">{server.error}</span>}
              <McpVisibility
                key={`${server.name}:${server.visibility ?? ""}`}
                server={server}
                onSaved={reload}
              />
              {server.perPerson ? (
                <span class="muted">{t("settings.mcp.perPerson")}</span>
              ) : (
                <button
                  type="button"
                  class="btn btn-small"
                  disabled={busy}
                  onClick={() => void toggle(server)}
                  data-testid={server.status === "connected" ? "mcp-disconnect" : "mcp-connect"}
                >
                  {server.status === "connected" ? t("settings.mcp.disconnect") : t("settings.mcp.connect")}
                </button>
              )}
              {server.removable ? (
                <button
                  type="button"
                  class="btn btn-small btn-danger"
                  disabled={removing}
                  onClick={() => void remove(server)}
                  data-testid="mcp-remove"
                >
                  {t("settings.mcp.remove")}
                </button>
              ) : (
                <span class="muted" title={t("settings.mcp.editFile")}>
                  mcp.json
                </span>
              )}
            </li>
          ))}
        </ul>
      )}
      <div class="form-actions">
        <button type="button" class="btn btn-small" onClick={() => void reload()} data-testid="mcp-refresh">
          {t("settings.mcp.refresh")}
        </button>
      </div>
      <McpAddForm onAdded={reload} />
      <McpSignIns />
    </section>
  );
}
