/**
 * Entry point for the official MCP conformance suite's client scenarios:
 *   conformance client --command "node dist/mcp/conformance-client.js" --scenario <name>
 * The suite appends the test server's URL and sets MCP_CONFORMANCE_SCENARIO (and, for some auth
 * scenarios, MCP_CONFORMANCE_CONTEXT). We drive Dimsum's own McpManager, as an agent run would: connect,
 * list the tools, and call each one with arguments made from its schema.
 *
 * The person is played by code: the authorization URL is followed without a browser (the suite's
 * authorization server redirects at once) and elicitations are accepted with the form's defaults.
 * The scenario's context says how the client is configured, as mcp.json would: pre-registered
 * credentials, a private key for `private_key_jwt`, or nothing (dynamic registration / CIMD).
 */
import type { ElicitResult } from "./client-handlers.js";
import type { McpHttpServerConfig, McpOAuthConfig } from "./config.js";
import { formDefaults } from "./elicitation-form.js";
import { McpManager } from "./manager.js";
import { memoryCredentialStore } from "./oauth/credential-store.js";
import type { OAuthAuthorizer } from "./oauth/provider.js";

interface ConformanceContext {
  client_id?: string;
  client_secret?: string;
  private_key_pem?: string;
  signing_algorithm?: string;
  idp_client_id?: string;
  idp_id_token?: string;
  idp_token_endpoint?: string;
}

/** The suite's client ID metadata document URL (it never fetches it in the CIMD scenario). */
const CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json";
const REDIRECT_URL = "http://127.0.0.1:3000/callback";

/** Follows the authorization URL like a browser that approves at once, and reads the code. */
const headlessBrowser: OAuthAuthorizer = {
  redirectUrl: () => REDIRECT_URL,
  async authorize(_server, url, state, signal) {
    const response = await fetch(url, { redirect: "manual", ...(signal ? { signal } : {}) });
    const location = response.headers.get("location");
    if (!location) throw new Error(`authorization endpoint answered ${response.status} without a redirect`);
    const redirect = new URL(location, url);
    if (state && redirect.searchParams.get("state") !== state) throw new Error("state mismatch in redirect");
    const code = redirect.searchParams.get("code");
    if (!code) throw new Error(`redirect carries no code: ${redirect.searchParams.get("error") ?? location}`);
    return redirect.searchParams;
  },
};

function oauthFor(scenario: string, context: ConformanceContext): McpOAuthConfig {
  if (context.client_id && context.client_secret && context.idp_token_endpoint && context.idp_id_token) {
    return {
      grant: "enterprise",
      clientId: context.client_id,
      clientSecret: context.client_secret,
      idp: {
        tokenEndpoint: context.idp_token_endpoint,
        clientId: context.idp_client_id ?? context.client_id,
        idToken: context.idp_id_token,
      },
    };
  }
  if (context.client_id && context.private_key_pem) {
    return {
      grant: "client_credentials",
      clientId: context.client_id,
      privateKey: context.private_key_pem,
      algorithm: context.signing_algorithm ?? "ES256",
    };
  }
  if (context.client_id && context.client_secret && scenario.startsWith("auth/client-credentials")) {
    return { grant: "client_credentials", clientId: context.client_id, clientSecret: context.client_secret };
  }
  if (context.client_id) {
    return {
      grant: "authorization_code",
      clientId: context.client_id,
      ...(context.client_secret ? { clientSecret: context.client_secret } : {}),
    };
  }
  return { grant: "authorization_code", clientMetadataUrl: CLIENT_METADATA_URL };
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
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
  const server: McpHttpServerConfig = {
    name: "conformance",
    transport: "http",
    url,
    headers: {},
    enabled: true,
    include: [],
    exclude: [],
    source: "conformance",
    oauth: oauthFor(scenario, context),
  };
  const manager = new McpManager({
    servers: [server],
    env: process.env,
    auth: { credentials: memoryCredentialStore(), authorizer: headlessBrowser },
    handlers: {
      elicit: async (_server, params): Promise<ElicitResult> =>
        "requestedSchema" in params
          ? { action: "accept", content: formDefaults(params.requestedSchema) }
          : { action: "accept" },
    },
  });
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
