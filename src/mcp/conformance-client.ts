/**
 * Entry point for the official MCP conformance suite's client scenarios:
 *   conformance client --command "node dist/mcp/conformance-client.js" --scenario <name>
 * The suite appends the test server's URL and sets MCP_CONFORMANCE_SCENARIO (and, for some auth
 * scenarios, MCP_CONFORMANCE_CONTEXT). We drive Dimsum's own McpManager, as an agent run would: connect,
 * list the tools, and call each one with arguments made from its schema.
 */
import type { McpHttpServerConfig } from "./config.js";
import { McpManager } from "./manager.js";

interface ConformanceContext {
  client_id?: string;
  client_secret?: string;
}

/** Placeholder arguments that satisfy a tool's required properties. */
function sampleArguments(schema: Record<string, unknown>): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<
    string,
    { type?: unknown; enum?: unknown[]; default?: unknown }
  >;
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  const args: Record<string, unknown> = {};
  for (const name of required) {
    const prop = properties[name] ?? {};
    if (prop.default !== undefined) args[name] = prop.default;
    else if (Array.isArray(prop.enum) && prop.enum.length > 0) args[name] = prop.enum[0];
    else args[name] = sampleValue(Array.isArray(prop.type) ? prop.type[0] : prop.type);
  }
  return args;
}

function sampleValue(type: unknown): unknown {
  switch (type) {
    case "number":
    case "integer":
      return 1;
    case "boolean":
      return true;
    case "array":
      return [];
    case "object":
      return {};
    default:
      return "test";
  }
}

async function main(): Promise<number> {
  const url = process.argv.at(-1);
  if (!url || !URL.canParse(url)) {
    process.stderr.write("usage: conformance-client <server-url>\n");
    return 2;
  }
  const context = parseContext(process.env.MCP_CONFORMANCE_CONTEXT);
  const server: McpHttpServerConfig = {
    name: "conformance",
    transport: "http",
    url,
    headers: {},
    enabled: true,
    include: [],
    exclude: [],
    source: "conformance",
    ...(context.client_id && context.client_secret
      ? { oauth: { clientId: context.client_id, clientSecret: context.client_secret } }
      : {}),
  };
  const manager = new McpManager({ servers: [server], env: process.env });
  try {
    const [status] = await manager.start();
    if (status?.state !== "connected") {
      process.stderr.write(`connect failed: ${status?.lastError ?? "unknown"}\n`);
      return 1;
    }
    let failures = 0;
    for (const tool of manager.tools("conformance")) {
      try {
        const result = await manager.callTool("conformance", tool.mcpName, sampleArguments(tool.inputSchema));
        process.stdout.write(`${tool.mcpName}: ${JSON.stringify(result.content).slice(0, 200)}\n`);
        if (result.isError) failures++;
      } catch (err) {
        failures++;
        process.stderr.write(`${tool.mcpName} failed: ${err instanceof Error ? err.message : String(err)}\n`);
      }
    }
    return failures === 0 ? 0 : 1;
  } finally {
    await manager.close();
  }
}

function parseContext(text: string | undefined): ConformanceContext {
  if (!text) return {};
  try {
    return JSON.parse(text) as ConformanceContext;
  } catch {
    return {};
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`conformance client crashed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exitCode = 1;
  },
);
