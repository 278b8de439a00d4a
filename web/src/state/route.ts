/** The app's routes and their paths; the server answers every non-API path with the SPA. */

/** The tabs of the settings page, in the order they are shown. */
export const SETTINGS_SECTIONS = [
  "providers",
  "tokens",
  "mcp",
  "remote-agents",
  "http-tools",
  "shell",
  "people",
  "sign-in",
  "account",
  "notifications",
  "spend",
  "audit",
  "capacity",
] as const;
export type SettingsSection = (typeof SETTINGS_SECTIONS)[number];

function isSettingsSection(value: string | undefined): value is SettingsSection {
  return (SETTINGS_SECTIONS as readonly (string | undefined)[]).includes(value);
}

export type Route =
  | { name: "home" }
  | { name: "channel"; channelId: string }
  | { name: "channel_settings"; channelId: string }
  | { name: "agents" }
  | { name: "agent_new" }
  | { name: "agent"; agentId: string }
  | { name: "settings"; section?: SettingsSection }
  | { name: "schedules" }
  | { name: "templates" }
  | { name: "knowledge" }
  | { name: "connectors" }
  | { name: "memory"; agentId?: string }
  /** A path the app has no page for (a mistyped or stale link): a "not found" page, not home. */
  | { name: "not_found"; path: string };

function segment(value: string): string | undefined {
  try {
    const decoded = decodeURIComponent(value);
    return decoded === "" ? undefined : decoded;
  } catch {
    return undefined;
  }
}

/** The route for a path; unknown paths lead to the not-found page. */
export function parseRoute(pathname: string): Route {
  const parts = pathname.split("/").filter((p) => p !== "");
  const [first, second, third] = parts;
  const id = second === undefined ? undefined : segment(second);
  if (first === "c" && id && parts.length === 2) return { name: "channel", channelId: id };
  if (first === "c" && id && third === "settings" && parts.length === 3) {
    return { name: "channel_settings", channelId: id };
  }
  if (first === "agents" && parts.length === 1) return { name: "agents" };
  if (first === "agents" && second === "_new" && parts.length === 2) return { name: "agent_new" };
  if (first === "agents" && id && parts.length === 2) return { name: "agent", agentId: id };
  if (first === "settings" && parts.length === 1) return { name: "settings" };
  if (first === "settings" && parts.length === 2 && isSettingsSection(second)) {
    return { name: "settings", section: second };
  }
  if (first === "schedules" && parts.length === 1) return { name: "schedules" };
  if (first === "templates" && parts.length === 1) return { name: "templates" };
  if (first === "knowledge" && parts.length === 1) return { name: "knowledge" };
  if (first === "connectors" && parts.length === 1) return { name: "connectors" };
  if (first === "memory" && parts.length === 1) return { name: "memory" };
  if (first === "memory" && id && parts.length === 2) return { name: "memory", agentId: id };
  if (parts.length === 0) return { name: "home" };
  return { name: "not_found", path: pathname };
}

/** The path of a route. */
export function routePath(route: Route): string {
  switch (route.name) {
    case "home":
      return "/";
    case "channel":
      return `/c/${encodeURIComponent(route.channelId)}`;
    case "channel_settings":
      return `/c/${encodeURIComponent(route.channelId)}/settings`;
    case "agents":
      return "/agents";
    case "agent_new":
      return "/agents/_new";
    case "agent":
      return `/agents/${encodeURIComponent(route.agentId)}`;
    case "settings":
      return route.section ? `/settings/${route.section}` : "/settings";
    case "schedules":
      return "/schedules";
    case "templates":
      return "/templates";
    case "knowledge":
      return "/knowledge";
    case "connectors":
      return "/connectors";
    case "memory":
      return route.agentId ? `/memory/${encodeURIComponent(route.agentId)}` : "/memory";
    case "not_found":
      return route.path;
  }
}

/** The channel a route is about, if any (the one the live connection follows). */
export function routeChannel(route: Route): string | undefined {
  return route.name === "channel" || route.name === "channel_settings" ? route.channelId : undefined;
}
