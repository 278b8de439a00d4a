/**
 * Who sees one MCP server, in its row of Settings → MCP servers: a lock / people mark and, for its
 * owner or an admin, the Visibility field behind a "Who can see it" toggle. A server that does not
 * report visibility (mcp.json, or a server from before owners) reads as seen by everyone.
 */
import { useState } from "preact/hooks";
import { useAction, useServices } from "../../hooks.js";
import { t } from "../../i18n/index.js";
import type { McpServerInfo } from "../../types.js";
import { useMe } from "../people.js";
import {
  mayChangeVisibility,
  VisibilityBadge,
  VisibilityField,
  visibilityOf,
  visibilityPatch,
} from "../visibility-field.js";

export function McpVisibility({
  server,
  onSaved,
}: {
  server: McpServerInfo;
  onSaved: () => Promise<unknown>;
}) {
  const { api } = useServices();
  const me = useMe();
  const [value, setValue] = useState(() => visibilityOf(server));
  const patch = visibilityPatch(value, server);
  const [save, saving] = useAction(async () => {
    if (!patch) return;
    await api.setMcpVisibility(server.name, patch);
    await onSaved();
  });
  return (
    <>
      <VisibilityBadge resource={server} />
      {mayChangeVisibility(me, server) && (
        <details class="mcp-visibility" data-testid="mcp-visibility">
          <summary>{t("visibility.legend")}</summary>
          <VisibilityField
            resource={server}
            value={value}
            onChange={setValue}
            name={`mcpVisibility-${server.name}`}
            testId="mcp-visibility-field"
          />
          <button
            type="button"
            class="btn btn-small btn-primary"
            disabled={saving || !patch}
            onClick={() => void save()}
            data-testid="mcp-visibility-save"
          >
            {t("kb.visibilitySave")}
          </button>
        </details>
      )}
    </>
  );
}
