/**
 * MCP tools as Dimsum tools. Each is registered as `<server>_<tool>` so two servers can both offer
 * `read_file`; the registry's wire-name map keeps the name provider-safe and reversible, and the
 * manager remembers which server and MCP tool name sit behind every registered name.
 */
import { toHashedWireName } from "../tools/tool-names.js";
import type {
  ElicitPerson,
  JsonSchemaTool,
  McpResourceContents,
  SamplePerson,
  ToolAppLink,
} from "../tools/types.js";
import type { McpToolInfo } from "./connection.js";
import { type McpCallResult, toToolResult } from "./tool-result.js";

/** What an MCP tool needs to run: a way to call its server. */
export interface McpToolCaller {
  callTool(
    name: string,
    args: Record<string, unknown>,
    options: {
      signal?: AbortSignal;
      timeoutMs?: number;
      onProgress?: (message: string) => void;
      /** Who answers the server's requests for input during this call. */
      elicit?: ElicitPerson;
      /** Who approves and serves the server's sampling requests during this call. */
      sample?: SamplePerson;
    },
  ): Promise<McpCallResult>;
}

/** The registered name of `tool` from `server`: `<server>_<tool>`. */
export function mcpToolName(server: string, tool: string): string {
  return `${server}_${tool}`;
}

/**
 * The name to use when `<server>_<tool>` is already taken (`a_b` + `c` meets `a` + `b_c`, or a
 * built-in): the same text plus a stable hash of the unambiguous pair.
 */
export function fallbackMcpToolName(server: string, tool: string): string {
  return toHashedWireName(`${server}/${tool}`);
}

/** Structured content larger than this is not copied onto the result's app link (the store keeps it). */
const MAX_APP_STRUCTURED_CHARS = 64 * 1024;

/**
 * Wraps one MCP tool; arguments are validated by the registry against `inputSchema` before `execute`.
 * A tool with an MCP App links its results to the app's `ui://` resource.
 */
export function createMcpTool(
  registeredName: string,
  server: string,
  info: McpToolInfo,
  caller: McpToolCaller & Pick<McpResourceSource, "readResource">,
  timeoutMs: number | undefined,
): JsonSchemaTool {
  const resourceUri = info.ui?.resourceUri;
  return {
    kind: "json",
    name: registeredName,
    description: info.description ?? info.title ?? `Tool \`${info.name}\` from MCP server "${server}".`,
    parameters: info.inputSchema,
    ...(timeoutMs ? { timeoutMs } : {}),
    mcp: {
      server,
      tool: info.name,
      ...(resourceUri ? { uiResourceUri: resourceUri } : {}),
      ...(info.ui?.visibility && !info.ui.visibility.includes("model") ? { appOnly: true } : {}),
      readResource: (uri, signal) => caller.readResource(uri, signal),
    },
    async execute(args, ctx) {
      const { progress, elicit, sample } = ctx;
      const result = await caller.callTool(info.name, args, {
        signal: ctx.signal,
        ...(progress ? { onProgress: progress } : {}),
        ...(elicit ? { elicit } : {}),
        ...(sample ? { sample } : {}),
      });
      const out = toToolResult(result);
      if (resourceUri) out.app = appLink(server, resourceUri, result.structuredContent);
      return out;
    },
  };
}

function appLink(server: string, resourceUri: string, structured: unknown): ToolAppLink {
  const link: ToolAppLink = { server, resourceUri };
  if (structured !== undefined && (JSON.stringify(structured)?.length ?? 0) <= MAX_APP_STRUCTURED_CHARS) {
    link.structuredContent = structured;
  }
  return link;
}

/** What the resource tools need: the server's resources and a way to read one. */
export interface McpResourceSource {
  listResources(): Promise<
    Array<{ uri: string; name: string; title?: string; mimeType?: string; description?: string }>
  >;
  listResourceTemplates(): Promise<
    Array<{ uriTemplate: string; name: string; title?: string; mimeType?: string; description?: string }>
  >;
  readResource(uri: string, signal?: AbortSignal): Promise<McpResourceContents>;
}

/**
 * `<server>_list_resources` and `<server>_read_resource`: the agent finds and reads what a server
 * exposes as resources (files, records, documents), including URIs built from resource templates.
 */
export function createResourceTools(server: string, source: McpResourceSource): JsonSchemaTool[] {
  const list: JsonSchemaTool = {
    kind: "json",
    name: mcpToolName(server, "list_resources"),
    description: `List the resources (and URI templates) MCP server "${server}" offers; read one with ${mcpToolName(server, "read_resource")}.`,
    parameters: { type: "object", properties: {}, additionalProperties: false },
    async execute() {
      const [resources, templates] = await Promise.all([
        source.listResources(),
        source.listResourceTemplates(),
      ]);
      const lines = resources.map(
        (r) =>
          `- ${r.uri}  ${r.title ?? r.name}${r.mimeType ? ` (${r.mimeType})` : ""}${r.description ? `: ${r.description}` : ""}`,
      );
      const templateLines = templates.map(
        (t) => `- ${t.uriTemplate}  ${t.title ?? t.name}${t.description ? `: ${t.description}` : ""}`,
      );
      const text = [
        resources.length > 0 ? `Resources:\n${lines.join("\n")}` : "No listed resources.",
        templates.length > 0
          ? `URI templates (fill in the {placeholders}):\n${templateLines.join("\n")}`
          : "",
      ]
        .filter(Boolean)
        .join("\n\n");
      return { content: text, data: { resources, templates } };
    },
  };
  const read: JsonSchemaTool = {
    kind: "json",
    name: mcpToolName(server, "read_resource"),
    description: `Read one resource of MCP server "${server}" by URI (from ${mcpToolName(server, "list_resources")} or a template).`,
    parameters: {
      type: "object",
      properties: { uri: { type: "string", description: "the resource URI" } },
      required: ["uri"],
      additionalProperties: false,
    },
    async execute(args, ctx) {
      const uri = String(args.uri);
      const result = await source.readResource(uri, ctx.signal);
      const parts = result.contents.map((c) =>
        c.text !== undefined
          ? result.contents.length > 1
            ? `${c.uri}:\n${c.text}`
            : c.text
          : `[binary ${c.mimeType ?? "data"} at ${c.uri}, ${Math.floor(((c.blob ?? "").length * 3) / 4)} bytes]`,
      );
      return { content: parts.join("\n\n") || "(empty resource)" };
    },
  };
  return [list, read];
}
