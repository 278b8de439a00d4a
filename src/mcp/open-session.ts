/**
 * Opens one protocol session with an MCP server: spawns a stdio server, or talks Streamable HTTP and
 * falls back to legacy SSE when the server does not speak it. Only this module and the connection
 * modules load the SDK's transports, so commands without MCP servers never pay for them.
 *
 * Auth: static headers (`Authorization: Bearer ${TOKEN}`), the OAuth client-credentials grant, or a
 * person's authorization-code login (see oauth/http-auth.ts). When the SDK asks for a browser step
 * and an authorizer is present, the session runs it and finishes the login with the returned code.
 *
 * Protocol revision: by default the client asks with `server/discover` whether the server speaks
 * 2026-07-28 and falls back to the 2025 `initialize` handshake for older servers (over stdio the SDK
 * probes on a short-lived sibling process, so a server that exits on an unknown request still gets
 * one clean start). On 2026-07-28 tool-list changes arrive on a `subscriptions/listen` stream, opened
 * here when the server offers them.
 */

import type {
  ClientOptions,
  McpSubscription,
  Transport,
  VersionNegotiationOptions,
} from "@modelcontextprotocol/client";
import {
  Client,
  SdkHttpError,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import { DEFAULT_INHERITED_ENV_VARS, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type {
  McpHttpServerConfig,
  McpProtocolChoice,
  McpServerConfig,
  McpStdioServerConfig,
} from "./config.js";
import { type HttpAuth, httpAuthFor, type McpAuthOptions } from "./oauth/http-auth.js";
import type { OAuthAuthorizer } from "./oauth/provider.js";
import type { StderrTail } from "./stderr-tail.js";

/** How a session ended up talking to its server. */
export type SessionTransport = "stdio" | "streamable-http" | "sse";

export interface McpSession {
  client: Client;
  transport: SessionTransport;
  /** The revision the session speaks (e.g. `2026-07-28`, `2025-11-25`). */
  protocolVersion: string | undefined;
  /** The stdio server's process id. */
  pid: number | undefined;
  /** Ends the session; a stdio server is asked to exit, then terminated. */
  close(): Promise<void>;
  /**
   * After an UnauthorizedError (a step-up mid-session): runs the browser step the SDK asked for and
   * finishes the login; false when there is none to run (headless, or nothing pending).
   */
  completeAuthorization(signal?: AbortSignal): Promise<boolean>;
}

export interface OpenSessionOptions {
  /** The environment the stdio server's safe base env is taken from. */
  env: Readonly<Record<string, string | undefined>>;
  clientInfo: { name: string; version: string };
  /** Aborts the attempt (the connect timeout); a half-started server is shut down. */
  signal: AbortSignal;
  /** Collects a stdio server's stderr lines for error reports. */
  stderr: StderrTail;
  /** Called once if the session ends without `close()` (crash, exit, dropped connection). */
  onUnexpectedClose: (reason: string) => void;
  /** Wires notification and request handlers before `initialize`, so none are missed. */
  prepare?: (client: Client) => void;
  /** What the client offers the server (elicitation, sampling, roots). */
  capabilities?: NonNullable<ClientOptions["capabilities"]>;
  /** OAuth logins and the browser step. */
  auth?: McpAuthOptions;
}

/** Variables a server may see besides its own `env`: enough to run, no secrets. */
const EXTRA_SAFE_VARS = ["LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ"];
const TERMINATE_TIMEOUT_MS = 1000;
/** A stdio server silent this long on `server/discover` is taken for a 2025 server. */
const STDIO_PROBE_TIMEOUT_MS = 5000;

/** The SDK's negotiation settings for a server's `protocol` choice. */
export function versionNegotiation(
  choice: McpProtocolChoice | undefined,
  transport: SessionTransport,
): VersionNegotiationOptions {
  if (choice === "2025") return { mode: "legacy" };
  if (choice === "2026-07-28") return { mode: { pin: "2026-07-28" } };
  return transport === "stdio"
    ? { mode: "auto", probe: { timeoutMs: STDIO_PROBE_TIMEOUT_MS } }
    : { mode: "auto" };
}

/** Connects to `server` and completes `initialize`. Throws on failure, leaving nothing running. */
export async function openSession(server: McpServerConfig, options: OpenSessionOptions): Promise<McpSession> {
  if (server.transport === "stdio") return openStdio(server, options);
  const auth = await httpAuthFor(server, options.auth ?? {});
  if (server.transport === "sse")
    return openOver("sse", sseTransport(server, auth), options, server.protocol);
  try {
    return await openStreamable(server, auth, options);
  } catch (err) {
    // A legacy server answers the Streamable HTTP POST with 404/405 (or another 4xx): try SSE.
    if (!(err instanceof SdkHttpError) || !isClientError(err.status) || options.signal.aborted) throw err;
    try {
      return await openOver("sse", sseTransport(server, auth), options, server.protocol);
    } catch (sseErr) {
      throw new Error(`${describe(err)}; the legacy SSE fallback also failed: ${describe(sseErr)}`, {
        cause: sseErr,
      });
    }
  }
}

/** The environment a stdio server starts with: the safe base variables, then its own `env`. */
export function stdioEnvironment(
  env: Readonly<Record<string, string | undefined>>,
  own: Record<string, string>,
): Record<string, string> {
  const base: Record<string, string> = {};
  for (const key of [...DEFAULT_INHERITED_ENV_VARS, ...EXTRA_SAFE_VARS]) {
    const value = env[key];
    // Exported shell functions ("() { ...") are a known injection vector.
    if (value !== undefined && !value.startsWith("()")) base[key] = value;
  }
  return { ...base, ...own };
}

/** Streamable HTTP; a login the SDK asks for runs once through the authorizer, then connects again. */
async function openStreamable(
  server: McpHttpServerConfig,
  auth: HttpAuth | undefined,
  options: OpenSessionOptions,
): Promise<McpSession> {
  const authorizer = options.auth?.authorizer;
  for (let attempt = 0; ; attempt++) {
    const transport = streamableTransport(server, auth);
    try {
      const session = await openOver("streamable-http", transport, options, server.protocol);
      session.completeAuthorization = (signal) => finishLogin(server, auth, authorizer, transport, signal);
      return session;
    } catch (err) {
      if (!(err instanceof UnauthorizedError) || attempt > 0) throw err;
      if (!(await finishLogin(server, auth, authorizer, transport, options.signal))) throw err;
    }
  }
}

async function finishLogin(
  server: McpHttpServerConfig,
  auth: HttpAuth | undefined,
  authorizer: OAuthAuthorizer | undefined,
  transport: StreamableHTTPClientTransport,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  const pending = auth?.login?.takePendingAuthorization();
  if (!pending || !authorizer) return false;
  const redirect = await authorizer.authorize(server.name, pending.url, pending.state, signal);
  if (typeof redirect === "string") await transport.finishAuth(redirect);
  else await transport.finishAuth(redirect);
  return true;
}

async function openStdio(server: McpStdioServerConfig, options: OpenSessionOptions): Promise<McpSession> {
  const transport = new StdioClientTransport({
    command: server.command,
    args: server.args,
    env: stdioEnvironment(options.env, server.env),
    stderr: "pipe",
    ...(server.cwd ? { cwd: server.cwd } : {}),
  });
  transport.stderr?.on("data", (chunk: Buffer) => options.stderr.push(chunk.toString("utf8")));
  const session = await openOver("stdio", transport, options, server.protocol);
  session.pid = transport.pid ?? undefined;
  return session;
}

async function openOver(
  kind: SessionTransport,
  transport: Transport,
  options: OpenSessionOptions,
  protocol: McpProtocolChoice | undefined,
): Promise<McpSession> {
  const client = new Client(options.clientInfo, {
    capabilities: options.capabilities ?? {},
    versionNegotiation: versionNegotiation(protocol, kind),
  });
  options.prepare?.(client);
  let closing = false;
  let ended = false;
  let established = false;
  let subscription: McpSubscription | undefined;
  client.onclose = () => {
    ended = true;
    // A failed handshake is reported by the caller through the thrown error, not as a crash.
    if (established && !closing) {
      options.onUnexpectedClose(kind === "stdio" ? "the server process exited" : "the connection closed");
    }
  };
  // Transport errors also surface as failed requests; keeping a handler stops the SDK from logging them.
  client.onerror = () => {};
  const close = async () => {
    if (closing) return;
    closing = true;
    if (ended) return;
    await subscription?.close().catch(() => {});
    if (transport instanceof StreamableHTTPClientTransport && transport.sessionId) {
      // Tell the server the session is over (DELETE), but never let a hung server hold up shutdown.
      await withTimeout(transport.terminateSession(), TERMINATE_TIMEOUT_MS).catch(() => {});
    }
    await client.close().catch(() => {});
  };
  const abort = () => void close();
  options.signal.addEventListener("abort", abort, { once: true });
  try {
    await client.connect(transport, { signal: options.signal });
  } catch (err) {
    await close();
    throw err;
  } finally {
    options.signal.removeEventListener("abort", abort);
  }
  established = true;
  subscription = await listenForChanges(client);
  return {
    client,
    transport: kind,
    protocolVersion: client.getNegotiatedProtocolVersion(),
    pid: undefined,
    close,
    completeAuthorization: async () => false,
  };
}

/**
 * On 2026-07-28 nothing arrives unasked: open the stream that carries `tools/list_changed` (the
 * handler `prepare` installed answers it). A server that refuses the stream only loses live updates.
 */
async function listenForChanges(client: Client): Promise<McpSubscription | undefined> {
  if (client.getProtocolEra() !== "modern") return undefined;
  if (!client.getServerCapabilities()?.tools?.listChanged) return undefined;
  return client.listen({ toolsListChanged: true }).catch(() => undefined);
}

function streamableTransport(server: McpHttpServerConfig, auth: HttpAuth | undefined) {
  return new StreamableHTTPClientTransport(new URL(server.url), httpOptions(server, auth));
}

function sseTransport(server: McpHttpServerConfig, auth: HttpAuth | undefined): Transport {
  return new SSEClientTransport(new URL(server.url), httpOptions(server, auth));
}

function httpOptions(server: McpHttpServerConfig, auth: HttpAuth | undefined) {
  return {
    requestInit: { headers: server.headers },
    ...(auth ? { authProvider: auth.provider } : {}),
    ...(auth?.fetch ? { fetch: auth.fetch } : {}),
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function isClientError(code: number | undefined): boolean {
  return code !== undefined && code >= 400 && code < 500 && code !== 401 && code !== 403;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
