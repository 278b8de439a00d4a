/** MCP servers with their connection status, and connect/disconnect buttons. */

import { useEffect, useState } from "preact/hooks";
import { plural } from "../../format.js";
import { useAction, useReportError, useServices } from "../../hooks.js";
import type { McpServerInfo } from "../../types.js";
import { askConfirm } from "../confirm-dialog.js";
import { McpAddForm } from "./mcp-add-form.js";
import { McpSignIns } from "./mcp-signins.js";

function toolCount(tools: McpServerInfo["tools"]): string | undefined {
  if (tools === undefined) return undefined;
  const n = Array.isArray(tools) ? tools.length : tools;
  return plural(n, "tool");
}

/** The MCP section: owners and admins see every server; members their own sign-ins. */
export function McpSection({ isAdmin }: { isAdmin: boolean }) {
  if (!isAdmin) {
    return (
      <section class="form" data-testid="settings-mcp">
        <h3>MCP accounts</h3>
        <McpSignIns empty="No MCP server here needs your own sign-in." />
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
      title: `Remove the MCP server "${server.name}"?`,
      message: "It is stopped and its tools are taken from every agent.",
      confirmLabel: "Remove",
    });
    if (!yes) return;
    await api.removeMcp(server.name);
    await reload();
  });

  return (
    <section class="form" data-testid="settings-mcp">
      <h3>MCP servers</h3>
      {servers === undefined ? (
        <p class="muted">Loading…</p>
      ) : servers.length === 0 ? (
        <p class="muted">
          No MCP servers yet. Add one below, or in <code>mcp.json</code> in the Dimsum home folder.
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
                  {server.status}
                </span>
              )}
              {!server.perPerson && toolCount(server.tools) && (
                <span class="muted">{toolCount(server.tools)}</span>
              )}
              {server.error && <span class="run-error">{server.error}</span>}
              {server.perPerson ? (
                <span class="muted">each member signs in</span>
              ) : (
                <button
                  type="button"
                  class="btn btn-small"
                  disabled={busy}
                  onClick={() => void toggle(server)}
                  data-testid={server.status === "connected" ? "mcp-disconnect" : "mcp-connect"}
                >
                  {server.status === "connected" ? "Disconnect" : "Connect"}
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
                  Remove
                </button>
              ) : (
                <span class="muted" title="Edit mcp.json to change it">
                  mcp.json
                </span>
              )}
            </li>
          ))}
        </ul>
      )}
      <div class="form-actions">
        <button type="button" class="btn btn-small" onClick={() => void reload()} data-testid="mcp-refresh">
          Refresh
        </button>
      </div>
      <McpAddForm onAdded={reload} />
      <McpSignIns />
    </section>
  );
}
