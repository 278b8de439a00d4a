/**
 * Who may reach an MCP server through `/api/mcp`: a server someone may not see is answered 404 that
 * names nothing (`resourceNotFound`); changing, connecting or removing one is for its owner or an
 * admin (403 for others who see it).
 */
import { forbidden } from "../../errors.js";
import type { McpControl, McpServerView } from "../../mcp/server-pool.js";
import {
  canChangeVisibility,
  canUseResource,
  resourceNotFound,
  type StoredVisible,
  type Viewer,
} from "../../shared/visibility.js";

/** The server `name` as `viewer` may see it; 404 when it does not exist or is hidden from them. */
export function visibleServer(mcp: McpControl, viewer: Viewer, name: string): McpServerView {
  const view = mcp.list().find((s) => s.name === name);
  if (!view || !canUseResource(viewer, view)) throw resourceNotFound("MCP server");
  return view;
}

/** The server `name` when `viewer` may change it (its owner or an admin): 404 hidden, 403 not theirs. */
export function ownedServer(mcp: McpControl, viewer: Viewer, name: string, what: string): McpServerView {
  const view = visibleServer(mcp, viewer, name);
  if (!canChangeVisibility(viewer, view)) {
    throw forbidden(`Only the MCP server's owner or an admin can ${what}.`, "ask its owner or an admin");
  }
  return view;
}

/** The servers `viewer` may see; only owners and admins see process ids and errors of others' servers. */
export function visibleServers(views: readonly McpServerView[], viewer: Viewer): McpServerView[] {
  return views
    .filter((v) => canUseResource(viewer, v))
    .map((v) => {
      if (canChangeVisibility(viewer, v)) return v;
      const { pid: _pid, error: _error, ...rest } = v;
      return rest;
    });
}

/** A visibility change merged onto what the server has now (fields not given are kept). */
export function mergedAccess(
  view: McpServerView,
  patch: { visibility?: StoredVisible["visibility"]; allowedUsers?: string[] },
): StoredVisible {
  const visibility = patch.visibility ?? view.visibility;
  const allowedUsers = patch.allowedUsers ?? view.allowedUsers;
  return {
    ...(view.ownerId ? { ownerId: view.ownerId } : {}),
    ...(visibility ? { visibility } : {}),
    ...(allowedUsers ? { allowedUsers } : {}),
  };
}

/**
 * A member's own remote MCP server stays private to them: its tools would otherwise be offered to
 * other people's runs, where a server the member controls could read what those runs hold. Owners
 * and admins share servers (everyone or chosen people); members get 403 for anything but private.
 */
export function sharedVisibility(
  viewer: Viewer,
  visibility: StoredVisible["visibility"] | undefined,
): StoredVisible["visibility"] | undefined {
  if (viewer.role === "owner" || viewer.role === "admin") return visibility;
  if (visibility !== undefined && visibility !== "private") {
    throw forbidden(
      "Only owners and admins can share an MCP server; a member's server is private to them.",
      'leave it "Only me", or ask an admin to share it',
    );
  }
  return "private";
}
