/**
 * `dimsum mcp login <server>` and `dimsum mcp logout <server>`: a person's OAuth sign-in to a remote
 * MCP server. Login prints the authorization URL (and opens a browser unless --no-browser), receives
 * the redirect on a loopback port, and stores the tokens encrypted under DIMSUM_HOME; later runs use
 * and refresh them. Logout revokes the tokens where the authorization server allows it and deletes them.
 */
import { spawn } from "node:child_process";
import { loadConfig } from "../../config/load-config.js";
import { DimsumError } from "../../errors.js";
import { loadMcpConfig, type McpHttpServerConfig } from "../../mcp/config.js";
import { EXIT_FAILURE, EXIT_OK } from "../exit-codes.js";
import { cliCredentialStore } from "../mcp-credentials.js";
import { type CliIo, guard } from "./mcp.js";

export interface McpLoginOptions {
  /** Only print the URL (commander's `--no-browser`). */
  browser?: boolean;
  /** How long to wait for the person, in ms (default 5 minutes). */
  timeout?: number;
}

const LOGIN_TIMEOUT_MS = 300_000;

export function mcpLoginCommand(name: string, options: McpLoginOptions, io: CliIo): Promise<number> {
  return guard(io, false, () => login(name, options, io));
}

export function mcpLogoutCommand(name: string, io: CliIo): Promise<number> {
  return guard(io, false, () => logout(name, io));
}

async function login(name: string, options: McpLoginOptions, io: CliIo): Promise<number> {
  const { home, server, env } = remoteServer(name, io);
  const store = cliCredentialStore(home);
  const stored = await store.load(name);
  if (stored?.tokens) {
    // A new login replaces the old tokens (another account, or more scope); the registration stays.
    delete stored.tokens;
    delete stored.expiresAt;
    await store.save(name, stored);
  }
  const storedPort = stored?.redirectUrl ? Number(new URL(stored.redirectUrl).port) : 0;
  const wantedPort = server.oauth?.grant === "authorization_code" ? server.oauth.redirectPort : undefined;
  const [{ startLoopbackAuthorizer }, { McpManager }] = await Promise.all([
    import("../../mcp/oauth/loopback.js"),
    import("../../mcp/manager.js"),
  ]);
  const authorizer = await startLoopbackAuthorizer({
    port: wantedPort ?? storedPort,
    show: (serverName, url) => {
      io.stdout.write(
        `Open this URL to sign in to "${serverName}":\n\n  ${url.href}\n\nWaiting for the redirect...\n`,
      );
      if (options.browser !== false) openBrowser(url.href);
    },
  });
  const limit = options.timeout ?? LOGIN_TIMEOUT_MS;
  const manager = new McpManager({
    servers: [{ ...server, connectTimeoutMs: limit }],
    env,
    connectTimeoutMs: limit,
    auth: { credentials: store, authorizer },
  });
  try {
    const [status] = await manager.start([name]);
    if (status?.state !== "connected") {
      io.stderr.write(`dimsum: signing in to "${name}" failed: ${status?.lastError ?? "unknown error"}\n`);
      return EXIT_FAILURE;
    }
    const scope = (await store.load(name))?.tokens?.scope;
    io.stdout.write(
      `Signed in to "${name}"${scope ? ` (scope: ${scope})` : ""}: ${status.toolCount} tool${status.toolCount === 1 ? "" : "s"}.\n`,
    );
    return EXIT_OK;
  } finally {
    await manager.close();
    await authorizer.close();
  }
}

async function logout(name: string, io: CliIo): Promise<number> {
  const config = loadConfig({ cwd: io.cwd, env: io.env });
  const store = cliCredentialStore(config.home);
  const stored = await store.load(name);
  if (!stored) {
    io.stdout.write(`Not signed in to "${name}".\n`);
    return EXIT_OK;
  }
  const { revokeTokens } = await import("../../mcp/oauth/revoke.js");
  const outcome = await revokeTokens(stored);
  await store.delete(name);
  const note =
    outcome.kind === "revoked"
      ? "the authorization server revoked the tokens"
      : outcome.kind === "unsupported"
        ? "the authorization server offers no revocation; the tokens were deleted here"
        : outcome.kind === "failed"
          ? `revoking at the authorization server failed (${outcome.reason}); the tokens were deleted here`
          : "no tokens were stored";
  io.stdout.write(`Signed out of "${name}": ${note}.\n`);
  return EXIT_OK;
}

function remoteServer(name: string, io: CliIo) {
  const config = loadConfig({ cwd: io.cwd, env: io.env });
  const servers = loadMcpConfig({ home: config.home, cwd: io.cwd, env: config.env });
  const server = servers.find((s) => s.name === name);
  if (!server) {
    throw new DimsumError("config", `Unknown MCP server: ${name}.`, {
      hint: `configured servers: ${servers.map((s) => s.name).join(", ") || "(none; add them to mcp.json)"}`,
    });
  }
  if (server.transport === "stdio") {
    throw new DimsumError(
      "invalid",
      `MCP server "${name}" runs locally over stdio; only remote servers sign in.`,
      {
        hint: "give stdio servers their credentials in their `env`",
      },
    );
  }
  if (server.oauth?.grant === "client_credentials") {
    throw new DimsumError(
      "invalid",
      `MCP server "${name}" signs in with its client credentials from mcp.json.`,
      {
        hint: 'remove "clientSecret"/"privateKey" or set "grant": "authorization_code" to sign in as a person',
      },
    );
  }
  return { home: config.home, server: server as McpHttpServerConfig, env: config.env };
}

/** Best effort: the platform's URL opener, detached; the printed URL is the fallback. */
function openBrowser(url: string): void {
  const [command, args] =
    process.platform === "darwin"
      ? ["open", [url]]
      : process.platform === "win32"
        ? ["cmd", ["/c", "start", "", url]]
        : ["xdg-open", [url]];
  try {
    const child = spawn(command, args, { stdio: "ignore", detached: true });
    child.on("error", () => {});
    child.unref();
  } catch {
    // No opener: the person uses the printed URL.
  }
}
