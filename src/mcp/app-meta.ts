/**
 * MCP Apps (SEP-1865, `@modelcontextprotocol/ext-apps`) as a host reads them: a tool's
 * `_meta.ui.resourceUri` (or the older flat `_meta["ui/resourceUri"]`), and the `ui://` resource's
 * HTML with the CSP and permissions its `_meta.ui` declares. Read by hand rather than through the
 * package's app-bridge entry, which would load its browser-side protocol classes into every CLI start.
 */
import { invalid } from "../errors.js";
import type { McpResourceContents } from "../tools/types.js";

/** The MIME type of an MCP App's HTML resource. */
export const MCP_APP_MIME_TYPE = "text/html;profile=mcp-app";

/** Who may call a tool: the model, the app, or both (the default). */
export type McpAppVisibility = "model" | "app";

/** What a tool's `_meta` says about its app. */
export interface McpToolUi {
  resourceUri: string;
  visibility?: McpAppVisibility[];
}

/** The origins an app's resource asks for (`_meta.ui.csp`). */
export interface McpAppCsp {
  connectDomains?: string[];
  resourceDomains?: string[];
  frameDomains?: string[];
  baseUriDomains?: string[];
}

/** An app's resource, ready to serve. */
export interface McpAppResource {
  uri: string;
  html: string;
  csp: McpAppCsp;
}

/** The app of a tool, from its `_meta`; undefined when it has none (or not a `ui://` one). */
export function toolUiOf(meta: unknown): McpToolUi | undefined {
  if (!isRecord(meta)) return undefined;
  const ui = isRecord(meta.ui) ? meta.ui : {};
  const uri = typeof ui.resourceUri === "string" ? ui.resourceUri : meta["ui/resourceUri"];
  if (typeof uri !== "string" || !uri.startsWith("ui://")) return undefined;
  const out: McpToolUi = { resourceUri: uri };
  if (Array.isArray(ui.visibility)) {
    out.visibility = ui.visibility.filter((v): v is McpAppVisibility => v === "model" || v === "app");
  }
  return out;
}

/** The app's HTML and declared CSP from a `resources/read` result; refuses anything but app HTML. */
export function appResourceOf(uri: string, read: McpResourceContents): McpAppResource {
  const content = read.contents.find((c) => c.uri === uri) ?? read.contents[0];
  const mime = content?.mimeType?.replace(/\s+/g, "").toLowerCase();
  if (!content || mime !== MCP_APP_MIME_TYPE) {
    throw invalid(
      `The MCP server answered ${uri} with ${mime ?? "nothing"}, not an MCP App (${MCP_APP_MIME_TYPE}).`,
      "ask the server's author to serve the app's HTML with that MIME type",
    );
  }
  const html =
    content.text ?? (content.blob !== undefined ? Buffer.from(content.blob, "base64").toString("utf8") : "");
  const ui = isRecord(content._meta) && isRecord(content._meta.ui) ? content._meta.ui : {};
  const csp = isRecord(ui.csp) ? ui.csp : {};
  const out: McpAppResource = {
    uri,
    html,
    csp: {
      connectDomains: origins(csp.connectDomains),
      resourceDomains: origins(csp.resourceDomains),
      frameDomains: origins(csp.frameDomains),
      baseUriDomains: origins(csp.baseUriDomains),
    },
  };
  return out;
}

/**
 * The Content-Security-Policy an app's document is served with: sandboxed to an opaque origin (no
 * cookies, no storage of the page, no reach into it), inline code allowed, and the network only to
 * the origins the resource declared; never to Dimsum itself.
 */
export function appContentSecurityPolicy(csp: McpAppCsp): string {
  const list = (domains: string[] | undefined, fallback: string) =>
    domains && domains.length > 0 ? domains.join(" ") : fallback;
  const resources = (csp.resourceDomains ?? []).join(" ");
  return [
    "sandbox allow-scripts",
    "default-src 'none'",
    `script-src 'unsafe-inline' blob: ${resources}`.trim(),
    `style-src 'unsafe-inline' ${resources}`.trim(),
    `img-src data: blob: ${resources}`.trim(),
    `font-src data: ${resources}`.trim(),
    `media-src data: blob: ${resources}`.trim(),
    `connect-src ${list(csp.connectDomains, "'none'")}`,
    `frame-src ${list(csp.frameDomains, "'none'")}`,
    `base-uri ${list(csp.baseUriDomains, "'none'")}`,
    "object-src 'none'",
    "form-action 'none'",
    "frame-ancestors 'self'",
  ].join("; ");
}

// `https://host`, `wss://*.host:443`: what a CSP source list may hold, nothing that ends a directive.
const ORIGIN = /^(https?|wss?):\/\/(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*(:\d{1,5})?$/i;

function origins(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.filter((v): v is string => typeof v === "string" && ORIGIN.test(v));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
