/**
 * `mcp.json`: which MCP servers to start. Read from `DIMSUM_HOME` and the working directory (the
 * project's entries override the home entries of the same name). Two shapes are accepted, so a file
 * written for another MCP client works as it is:
 *   {"mcpServers": {"name": {"command", "args", "env", "cwd"} | {"url", "headers", "transport"}}}
 *   {"servers": [{"name", "transport": "stdio"|"http"|"sse", ...}]}
 */

import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import * as z from "zod";
import { expandVariables } from "../config/expand-variables.js";
import { parseConfigJson } from "../config/parse-config-json.js";
import { DimsumError } from "../errors.js";
import type { Visibility } from "../shared/visibility.js";

/** Settings every server has, whatever its transport. */
export interface McpServerCommon {
  name: string;
  enabled: boolean;
  /** Per-call time limit in ms (the registry default applies when absent). */
  timeoutMs?: number;
  /** Time limit for starting, initialising and listing tools, in ms. */
  connectTimeoutMs?: number;
  /** Tool names or globs (`*`, `?`) to offer; empty means all. */
  include: string[];
  /** Tool names or globs to hide; applied after `include`. */
  exclude: string[];
  /** The file this entry came from, for messages. */
  source: string;
  /** Why this entry cannot start (e.g. a missing `${VAR}`); the server is reported as failed. */
  problem?: string;
  /** Who added it on the team server (Settings → MCP servers); absent: everyone sees it. */
  ownerId?: string;
  /** Who sees and uses it besides owners and admins of the server (default `everyone`). */
  visibility?: Visibility;
  /** The people who see it besides its owner (visibility `people`). */
  allowedUsers?: string[];
  /**
   * Which MCP revision to speak: `auto` (the default) asks with `server/discover` for 2026-07-28 and
   * falls back to the 2025 `initialize` handshake; `2025` skips the probe; `2026-07-28` never falls back.
   */
  protocol?: McpProtocolChoice;
}

export type McpProtocolChoice = "auto" | "2025" | "2026-07-28";

export interface McpStdioServerConfig extends McpServerCommon {
  transport: "stdio";
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

/**
 * OAuth client-credentials grant (machine-to-machine); the SDK fetches and refreshes the token.
 * The client authenticates with a secret (`client_secret_basic`/`_post`) or a private key (`private_key_jwt`).
 */
export interface McpOAuthClientCredentials {
  grant: "client_credentials";
  clientId: string;
  clientSecret?: string;
  /** PKCS#8 PEM private key for `private_key_jwt` client authentication. */
  privateKey?: string;
  /** Signing algorithm for `privateKey` (default ES256). */
  algorithm?: string;
  scope?: string;
}

/**
 * OAuth authorization-code grant with PKCE for a person's account (`dimsum mcp login <server>`).
 * Without `clientId` Dimsum uses a client ID metadata document (`clientMetadataUrl`) where the
 * authorization server supports it, else registers itself dynamically.
 */
export interface McpOAuthAuthorizationCode {
  grant: "authorization_code";
  /** Pre-registered client. */
  clientId?: string;
  clientSecret?: string;
  /** Scope to ask for when neither the server's challenge nor its metadata names one. */
  scope?: string;
  /** HTTPS URL of Dimsum's client ID metadata document, used as client_id where supported. */
  clientMetadataUrl?: string;
  /** Fixed loopback port for the redirect (default: any free port, remembered per server). */
  redirectPort?: number;
}

/**
 * Enterprise-managed authorization (SEP-990): the person's ID token from the enterprise IdP is
 * exchanged there for an identity assertion grant, which this client presents to the server's
 * authorization server (JWT-bearer grant, authenticated with its client secret).
 */
export interface McpOAuthEnterprise {
  grant: "enterprise";
  clientId: string;
  clientSecret: string;
  scope?: string;
  idp: { tokenEndpoint: string; clientId: string; clientSecret?: string; idToken: string };
}

export type McpOAuthConfig = McpOAuthClientCredentials | McpOAuthAuthorizationCode | McpOAuthEnterprise;

export interface McpHttpServerConfig extends McpServerCommon {
  /** `http`: Streamable HTTP, falling back to legacy SSE; `sse`: legacy SSE only. */
  transport: "http" | "sse";
  url: string;
  headers: Record<string, string>;
  /** Absent: the authorization-code flow is used when the server asks for OAuth (see `dimsum mcp login`). */
  oauth?: McpOAuthConfig;
}

export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

export interface LoadMcpConfigOptions {
  /** `DIMSUM_HOME`. */
  home: string;
  cwd: string;
  /** Values for `${VAR}` in env, headers, args and URLs. */
  env: Readonly<Record<string, string | undefined>>;
}

export const MCP_CONFIG_FILE = "mcp.json";

/** The `source` of servers added in Settings → MCP servers (the only ones the UI may remove). */
export const MCP_SETTINGS_SOURCE = "Settings → MCP servers";

/** The file's schemas, built by the first mcp.json read: most runs have none. */
function buildSchemas() {
  const stringList = z.array(z.string());
  const stringMap = z.record(z.string(), z.string());
  const milliseconds = z.number().int().positive();

  const commonFields = {
    enabled: z.boolean().optional(),
    /** Cline and others write `disabled: true`. */
    disabled: z.boolean().optional(),
    timeout: milliseconds.optional(),
    connectTimeout: milliseconds.optional(),
    include: stringList.optional(),
    exclude: stringList.optional(),
    protocol: z.enum(["auto", "2025", "2026-07-28"]).optional(),
  };

  const stdioEntry = z.object({
    ...commonFields,
    transport: z.literal("stdio").optional(),
    type: z.literal("stdio").optional(),
    command: z.string().min(1),
    args: stringList.optional(),
    env: stringMap.optional(),
    cwd: z.string().optional(),
  });

  const httpTransport = z.enum(["http", "streamable-http", "streamableHttp", "sse"]);

  const httpEntry = z.object({
    ...commonFields,
    transport: httpTransport.optional(),
    type: httpTransport.optional(),
    url: z.string().min(1),
    headers: stringMap.optional(),
    oauth: z
      .object({
        grant: z.enum(["authorization_code", "client_credentials", "enterprise"]).optional(),
        clientId: z.string().min(1).optional(),
        clientSecret: z.string().min(1).optional(),
        privateKey: z.string().min(1).optional(),
        algorithm: z.string().min(1).optional(),
        scope: z.string().optional(),
        clientMetadataUrl: z.string().url().optional(),
        redirectPort: z.number().int().min(1).max(65535).optional(),
        idp: z
          .object({
            tokenEndpoint: z.string().url(),
            clientId: z.string().min(1),
            clientSecret: z.string().min(1).optional(),
            idToken: z.string().min(1),
          })
          .optional(),
      })
      .optional(),
  });

  const fileSchema = z.object({
    mcpServers: z.record(z.string(), z.unknown()).optional(),
    servers: z.array(z.unknown()).optional(),
  });
  return { stdioEntry, httpEntry, fileSchema };
}

type Schemas = ReturnType<typeof buildSchemas>;
type Entry = z.output<Schemas["stdioEntry"]> | z.output<Schemas["httpEntry"]>;
let schemas: Schemas | undefined;

/** Reads both config files and merges them by server name (cwd over home). Throws DimsumError('config'). */
export function loadMcpConfig(options: LoadMcpConfigOptions): McpServerConfig[] {
  const homeFile = join(options.home, MCP_CONFIG_FILE);
  const cwdFile = join(options.cwd, MCP_CONFIG_FILE);
  const byName = new Map<string, McpServerConfig>();
  const files = resolve(homeFile) === resolve(cwdFile) ? [homeFile] : [homeFile, cwdFile];
  for (const file of files) {
    const text = readOptional(file);
    if (text === undefined) continue;
    for (const server of parseMcpConfig(text, file, options.env)) byName.set(server.name, server);
  }
  return [...byName.values()];
}

/** Parses one `mcp.json` text; `file` names it in errors and anchors relative `cwd` paths. */
export function parseMcpConfig(
  text: string,
  file: string,
  env: Readonly<Record<string, string | undefined>>,
): McpServerConfig[] {
  const json = parseConfigJson(text, `MCP config ${file}`);
  schemas ??= buildSchemas();
  const top = schemas.fileSchema.safeParse(json);
  if (!top.success || typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new DimsumError("config", `MCP config ${file} must be a JSON object.`, {
      hint: 'use {"mcpServers": {"name": {"command": "..."}}} or {"servers": [{"name": "...", ...}]}',
    });
  }
  const raw: Array<{ name: string; value: unknown }> = [];
  for (const [name, value] of Object.entries(top.data.mcpServers ?? {})) raw.push({ name, value });
  top.data.servers?.forEach((value, index) => {
    const name = isRecord(value) && typeof value.name === "string" ? value.name : "";
    if (name === "") {
      throw new DimsumError("config", `MCP config ${file}: servers[${index}] has no "name".`, {
        hint: "give every server a name",
      });
    }
    const rest: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    delete rest.name;
    raw.push({ name, value: rest });
  });
  const seen = new Set<string>();
  return raw.map(({ name, value }) => {
    if (seen.has(name)) {
      throw new DimsumError("config", `MCP config ${file} defines server "${name}" twice.`, {
        hint: "server names must be unique within a file",
      });
    }
    seen.add(name);
    return toServerConfig(name, parseEntry(name, value, file), file, env);
  });
}

function parseEntry(name: string, value: unknown, file: string): Entry {
  if (!isRecord(value)) {
    throw new DimsumError("config", `MCP config ${file}: server "${name}" must be an object.`, {
      hint: 'give it a "command" (stdio) or a "url" (HTTP)',
    });
  }
  if (!("command" in value) && !("url" in value)) {
    throw new DimsumError("config", `MCP config ${file}: server "${name}" has neither "command" nor "url".`, {
      hint: 'stdio servers need "command"; HTTP servers need "url"',
    });
  }
  schemas ??= buildSchemas();
  const schema = "command" in value ? schemas.stdioEntry : schemas.httpEntry;
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.join(".") || "(entry)"}: ${issue.message}`)
    .join("; ");
  throw new DimsumError("config", `MCP config ${file}: server "${name}" is invalid: ${problems}`);
}

function toServerConfig(
  name: string,
  entry: Entry,
  file: string,
  env: Readonly<Record<string, string | undefined>>,
): McpServerConfig {
  const missing = new Set<string>();
  const expand = (text: string) => expandVariables(text, env, missing);
  const expandMap = (map: Record<string, string> | undefined) =>
    Object.fromEntries(Object.entries(map ?? {}).map(([k, v]) => [k, expand(v)]));
  const common: McpServerCommon = {
    name,
    enabled: entry.disabled === true ? false : (entry.enabled ?? true),
    include: entry.include ?? [],
    exclude: entry.exclude ?? [],
    source: file,
    ...(entry.timeout ? { timeoutMs: entry.timeout } : {}),
    ...(entry.connectTimeout ? { connectTimeoutMs: entry.connectTimeout } : {}),
    ...(entry.protocol ? { protocol: entry.protocol } : {}),
  };
  let server: McpServerConfig;
  if ("command" in entry) {
    server = {
      ...common,
      transport: "stdio",
      command: expand(entry.command),
      args: (entry.args ?? []).map(expand),
      env: expandMap(entry.env),
      ...(entry.cwd ? { cwd: resolve(dirname(file), expand(entry.cwd)) } : {}),
    };
  } else {
    const kind = entry.transport ?? entry.type ?? "http";
    server = {
      ...common,
      transport: kind === "sse" ? "sse" : "http",
      url: expand(entry.url),
      headers: expandMap(entry.headers),
      ...(entry.oauth ? { oauth: toOAuthConfig(name, entry.oauth, file, expand) } : {}),
    };
    if (missing.size === 0 && !URL.canParse(server.url)) {
      throw new DimsumError(
        "config",
        `MCP config ${file}: server "${name}" has an invalid url ${server.url}.`,
        {
          hint: "use a full URL such as http://127.0.0.1:3001/mcp",
        },
      );
    }
  }
  if (missing.size > 0) {
    const names = [...missing].join(", ");
    server.problem = `server "${name}" in ${file} uses unset environment variable${missing.size > 1 ? "s" : ""} ${names}; set ${missing.size > 1 ? "them" : "it"} (or write \${VAR:-default})`;
  }
  return server;
}

type OAuthEntry = NonNullable<z.output<Schemas["httpEntry"]>["oauth"]>;

/** `oauth` with a secret or key and no `grant` is the client-credentials grant (machine-to-machine). */
function toOAuthConfig(
  name: string,
  entry: OAuthEntry,
  file: string,
  expand: (text: string) => string,
): McpOAuthConfig {
  const opt = (value: string | undefined) => (value === undefined ? undefined : expand(value));
  const grant =
    entry.grant ??
    (entry.idp
      ? "enterprise"
      : entry.clientSecret || entry.privateKey
        ? "client_credentials"
        : "authorization_code");
  if (grant === "enterprise") {
    if (!entry.clientId || !entry.clientSecret || !entry.idp) {
      throw new DimsumError(
        "config",
        `MCP config ${file}: server "${name}" uses enterprise-managed authorization without "clientId", "clientSecret" and "idp".`,
        { hint: 'add "idp": {"tokenEndpoint", "clientId", "idToken"} and the client credentials' },
      );
    }
    const idp = entry.idp;
    return dropUndefined({
      grant,
      clientId: expand(entry.clientId),
      clientSecret: expand(entry.clientSecret),
      scope: entry.scope,
      idp: dropUndefined({
        tokenEndpoint: expand(idp.tokenEndpoint),
        clientId: expand(idp.clientId),
        clientSecret: opt(idp.clientSecret),
        idToken: expand(idp.idToken),
      }) as McpOAuthEnterprise["idp"],
    }) as McpOAuthEnterprise;
  }
  if (grant === "client_credentials") {
    if (!entry.clientId || (!entry.clientSecret && !entry.privateKey)) {
      throw new DimsumError(
        "config",
        `MCP config ${file}: server "${name}" uses the client-credentials grant without "clientId" and "clientSecret" or "privateKey".`,
        { hint: 'add them, or set "grant": "authorization_code" to sign in with `dimsum mcp login`' },
      );
    }
    return dropUndefined({
      grant,
      clientId: expand(entry.clientId),
      clientSecret: opt(entry.clientSecret),
      privateKey: opt(entry.privateKey),
      algorithm: entry.algorithm,
      scope: entry.scope,
    }) as McpOAuthClientCredentials;
  }
  return dropUndefined({
    grant,
    clientId: opt(entry.clientId),
    clientSecret: opt(entry.clientSecret),
    scope: entry.scope,
    clientMetadataUrl: entry.clientMetadataUrl,
    redirectPort: entry.redirectPort,
  }) as McpOAuthAuthorizationCode;
}

function dropUndefined<T extends Record<string, unknown>>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

function readOptional(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new DimsumError("config", `cannot read MCP config ${file}: ${(err as Error).message}`, {
      hint: "fix the file's permissions or remove it",
    });
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
