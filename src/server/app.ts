/**
 * The server's composition root: services (accounts, sessions, API tokens, settings, rate limits),
 * the Hono app with its security middleware and routes, the node HTTP(S) server, and the WebSocket hub.
 */
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { hostname } from "node:os";
import { getRequestListener } from "@hono/node-server";
import { Hono } from "hono";
import type { ShellOffer } from "../capabilities/shell-offer.js";
import type { DimsumConfig } from "../config/load-config.js";
import { DimsumError } from "../errors.js";
import { AuditLog } from "../store/audit/audit-log.js";
import { startBackgroundCheckpoints } from "../store/background-checkpoint.js";
import { BudgetStore } from "../store/budgets/budget-store.js";
import type { Database } from "../store/database.js";
import { enableGroupCommit } from "../store/group-commit.js";
import { sqliteDatabase } from "../store/sql-database.js";
import { localizeStarterAgents } from "../team/localize-starters.js";
import type { Actor, Team } from "../team/types.js";
import { type AccountsFactory, sqliteAccounts } from "./accounts.js";
import { auditRequests } from "./audit/audit-points.js";
import { auditRoutes } from "./audit/audit-routes.js";
import { AuthEvents } from "./auth/auth-events.js";
import { sessionTokenFromCookieHeader } from "./auth/cookies.js";
import { ensureOwner, type OwnerCreated } from "./auth/ensure-owner.js";
import { authenticate, requireAuth } from "./auth/middleware.js";
import type { ScryptParams } from "./auth/passwords.js";
import type { AppEnv, DimsumApp, ServerLog, ServerServices } from "./context.js";
import {
  beforeRoutingErrorResponse,
  errorJson,
  errorResponse,
  internalError,
  toApiError,
} from "./http/errors.js";
import { limitStreamedBody, readBody } from "./http/read-body.js";
import { authRoutes } from "./routes/auth.js";
import { budgetRoutes } from "./routes/budgets.js";
import { modelRoutes } from "./routes/models.js";
import { settingsRoutes } from "./routes/settings.js";
import { ssoSettingsRoutes, ssoSignInRoutes } from "./routes/sso.js";
import { tokenRoutes } from "./routes/tokens.js";
import { userRoutes } from "./routes/users.js";
import { csrfGuard } from "./security/csrf.js";
import { securityHeaders } from "./security/headers.js";
import { createRateLimits, type RateLimitConfig } from "./security/rate-limit.js";
import { clientIpOf, isSecureRequest, sameOrigin } from "./security/request-origin.js";
import type { SharedLimits } from "./security/shared-limits.js";
import { openSecretBox } from "./settings/secret-box.js";
import { type SettingsRepository, SettingsStore } from "./settings/settings-store.js";
import { OidcClients } from "./sso/oidc-client.js";
import { defaultStaticDir } from "./static/default-dir.js";
import { isApiPath, staticSite } from "./static/static-files.js";
import { WsHub, type WsHubOptions } from "./ws/hub.js";
import type { WsIdentity } from "./ws/hub-client.js";
import type { TeamEventSource } from "./ws/protocol.js";
import { RunEventLog } from "./ws/run-event-log.js";

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** `/v1/chat/completions` bodies: room for the default ten attachments as base64 (about 4/3 their size). */
export const DEFAULT_MAX_COMPLETION_BYTES = 64 * 1024 * 1024;
export const DEFAULT_MAX_UPLOAD_BYTES = 200 * 1024 * 1024;

export interface ServerDeps {
  /**
   * The SQLite file, when the state lives there: the default accounts and settings are in it, and its
   * commits and checkpoints are tuned here. Without it, pass `accounts` and `settings` (PostgreSQL).
   */
  db?: Database;
  config: DimsumConfig;
  /** Data directory (holds `secret.key` for provider keys at rest). */
  home: string;
  team?: Team;
  /** What `/ws` streams; defaults to `team`. Tests pass a small in-memory source. */
  events?: TeamEventSource;
  /** The built web UI; defaults to `<package>/web/dist`. */
  staticDir?: string;
  /** Believe `X-Forwarded-For` / `X-Forwarded-Proto` (only behind a reverse proxy you run). */
  trustProxy?: boolean;
  log?: ServerLog;
  /** Reuse a settings store (the composition root shares it with model resolution). */
  settings?: SettingsRepository;
  /** Serve HTTPS directly. */
  tls?: { key: string | Buffer; cert: string | Buffer };
  /** Largest request body on `/api` and `/v1` (default 1 MiB). */
  maxBodyBytes?: number;
  rateLimits?: RateLimitConfig;
  /** Several instances: the rate limits count in Redis, for all of them together. */
  sharedLimits?: SharedLimits;
  sessionTtlMs?: number;
  /** scrypt cost for new password hashes (default N=2^15, r=8, p=1). */
  passwordHashParams?: ScryptParams;
  ws?: WsHubOptions;
  /** Create the `owner` account at `listen` when none exists (default true). */
  ensureOwner?: boolean;
  /** Largest multipart upload (knowledge base files), default 200 MB. */
  maxUploadBytes?: number;
  /** Largest `/v1` request body (default DEFAULT_MAX_COMPLETION_BYTES). */
  maxCompletionBytes?: number;
  /** More routes (the team API, the OpenAI endpoint), mounted after the built-in API, before the SPA. */
  routes?: Array<(app: DimsumApp) => void>;
  /**
   * Commit the writes of each event-loop turn together (default true): fewer, larger commits under
   * load; a crash can lose only the current turn's writes. See store/group-commit.ts.
   */
  groupCommit?: boolean;
  /** Checkpoint the WAL on a worker thread instead of inside commits (default true). */
  backgroundCheckpoints?: boolean;
  /** The shell tool's sandbox and offer, shown in Settings (see capabilities/shell-offer.ts). */
  shell?: ShellOffer;
  /** Routes that authenticate callers themselves (signed platform webhooks), mounted before the session guards. */
  publicRoutes?: Array<(app: DimsumApp) => void>;
  /** The auth layer's change events; created here when absent (pass one to listen elsewhere too). */
  authEvents?: AuthEvents;
  /** Where accounts, login sessions and API tokens live (default: the SQLite file `db`). */
  accounts?: AccountsFactory;
  /** The audit log (default: in the SQLite file `db`; none without it). */
  audit?: AuditLog;
  /** The budgets (default: in the SQLite file `db`; none without it). */
  budgets?: BudgetStore;
}

export interface Listening {
  url: string;
  port: number;
  /** The owner account created at this start, if any. */
  owner: OwnerCreated | undefined;
  close(): Promise<void>;
}

export interface DimsumServer {
  app: DimsumApp;
  services: ServerServices;
  server: HttpServer | HttpsServer;
  hub: WsHub;
  /** What the auth layer tells about rights that changed (the hub listens; others may too). */
  authEvents: AuthEvents;
  /** The caller behind an API token (or `Bearer <token>` header value), for the OpenAI endpoint. */
  authenticateApiToken(bearer: string | undefined): Promise<Actor | undefined>;
  listen(port: number, host?: string): Promise<Listening>;
  close(): Promise<void>;
}

/** Writes warnings and errors to stderr, drops info; the CLI passes its own. */
export const stderrLog: ServerLog = {
  info: () => {},
  warn: (message) => process.stderr.write(`dimsum: ${message}\n`),
  error: (message, err) =>
    process.stderr.write(
      `dimsum: ${message}${err ? `: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}` : ""}\n`,
    ),
};

/** Builds the Hono app over the given services (no network). */
export function createApp(
  services: ServerServices,
  deps: Pick<
    ServerDeps,
    | "staticDir"
    | "maxBodyBytes"
    | "maxUploadBytes"
    | "maxCompletionBytes"
    | "routes"
    | "publicRoutes"
    | "team"
  >,
): DimsumApp {
  const app = new Hono<AppEnv>();
  const { log, trustProxy } = services;

  app.onError((err, c) => {
    const known = toApiError(err);
    if (known) return errorResponse(c, known);
    log.error(`${c.req.method} ${c.req.path} failed`, err);
    return errorResponse(c, internalError());
  });
  app.notFound((c) => {
    if (isApiPath(c.req.path))
      return errorResponse(c, new DimsumError("not_found", `no route ${c.req.method} ${c.req.path}`));
    return c.text("not found", 404);
  });

  app.use("*", securityHeaders());
  app.use("*", async (c, next) => {
    const incoming = c.env?.incoming;
    c.set("services", services);
    c.set("clientIp", clientIpOf(incoming, trustProxy));
    c.set("secure", isSecureRequest(incoming, trustProxy));
    c.set("auth", undefined);
    await next();
  });
  const limit = readBody(deps.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
  // Knowledge uploads carry files (checked one by one by their route, which parses multipart from
  // the WHATWG Request); everything else stays small.
  const uploadLimit = limitStreamedBody(deps.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES);
  app.use("/api/*", (c, next) =>
    (/^\/api\/kb\/[^/]+\/upload$|^\/api\/channels\/[^/]+\/attachments$/.test(c.req.path)
      ? uploadLimit
      : limit)(c, next),
  );
  // A completion may carry images and PDFs inline (base64 data URLs).
  app.use("/v1/*", readBody(deps.maxCompletionBytes ?? DEFAULT_MAX_COMPLETION_BYTES));
  app.use("/a2a/*", limit);
  // These answer without calling next(), so the session guards below never see their requests.
  for (const mount of deps.publicRoutes ?? []) mount(app);
  // Single sign-on's way out to the provider and back: before the guards, as nobody is signed in yet.
  app.route("/api/auth/sso", ssoSignInRoutes());
  app.use("/api/*", authenticate, csrfGuard, requireAuth);
  // Records the security-relevant requests (audit/audit-points.ts) once each route has answered.
  app.use("/api/*", auditRequests());

  const { team } = deps;
  app.route(
    "/api/auth",
    authRoutes(
      team
        ? {
            // A server set up in Chinese gives its owner the starter agents in Chinese.
            onOwnerCreated: async (user, locale) => {
              await localizeStarterAgents(team, { userId: user.id, role: user.role }, locale);
            },
          }
        : {},
    ),
  );
  app.route("/api/users", userRoutes());
  app.route("/api/settings", settingsRoutes());
  app.route("/api/models", modelRoutes());
  app.route("/api/tokens", tokenRoutes());
  app.route("/api/sso", ssoSettingsRoutes());
  app.route("/api/audit", auditRoutes());
  app.route("/api/budgets", budgetRoutes());

  // Team routes (src/server/routes/team.ts, mountTeamRoutes) and the OpenAI endpoint plug in here,
  // after the guards above and before the SPA fallback below.
  for (const mount of deps.routes ?? []) mount(app);

  app.get("*", staticSite(deps.staticDir ?? defaultStaticDir()));
  return app;
}

/** Creates the server (not yet listening). Call `listen` to start and `close` to stop. */
export function createServer(deps: ServerDeps): DimsumServer {
  const log = deps.log ?? stderrLog;
  const db = deps.db;
  if (db && deps.groupCommit !== false)
    enableGroupCommit(db, (err) => log.error("a database commit failed; that turn's writes were lost", err));
  const checkpoints =
    !db || deps.backgroundCheckpoints === false
      ? undefined
      : startBackgroundCheckpoints(db, { onError: (err) => log.error("WAL checkpoints", err) });
  const accounts = deps.accounts ?? (db ? sqliteAccounts(db) : undefined);
  const box = openSecretBox(deps.home, { key: deps.config.server.secretKey });
  const settings = deps.settings ?? (db ? new SettingsStore(db, box) : undefined);
  if (!accounts || !settings) {
    throw new DimsumError("internal", "createServer needs the SQLite `db`, or `accounts` and `settings`.");
  }
  // Role changes, ended sessions and deleted accounts reach the WebSocket hub through this, at once.
  const authEvents =
    deps.authEvents ?? new AuthEvents((err) => log.error("an auth event listener failed", err));
  const { users, sessions, apiTokens, sso } = accounts({
    events: authEvents,
    ...(deps.passwordHashParams ? { hashParams: deps.passwordHashParams } : {}),
    ...(deps.sessionTtlMs ? { sessionTtlMs: deps.sessionTtlMs } : {}),
  });
  const services: ServerServices = {
    config: deps.config,
    users,
    sessions,
    apiTokens,
    settings,
    sso: { store: sso, oidc: new OidcClients(), box },
    limits: createRateLimits(deps.rateLimits, deps.sharedLimits, sharedLimitsWarning(log)),
    log,
    trustProxy: deps.trustProxy ?? false,
    shell: deps.shell,
  };
  const audit = deps.audit ?? (db ? new AuditLog(sqliteDatabase(db), { instance: hostname() }) : undefined);
  if (audit) services.audit = audit;
  const budgets = deps.budgets ?? (db ? new BudgetStore(sqliteDatabase(db)) : undefined);
  if (budgets) services.budgets = budgets;
  const app = createApp(services, deps);

  const identityFor = async (token: string): Promise<WsIdentity | undefined> => {
    const found = await sessions.authenticate(token);
    if (!found) return undefined;
    const sessionId = found.session.id;
    return {
      actor: { userId: found.user.id, role: found.user.role },
      sessionId,
      isValid: () => sessions.isActive(sessionId),
      currentRole: async () => (await users.get(found.user.id))?.role,
    };
  };
  // Every run's agent events as they pass (this instance's and the others'), so a socket reconnecting
  // here resumes its runs. Listening before the hub exists: the log hears each event before sockets.
  const runLogOptions = { onError: (err: unknown) => log.error("recording a run event failed", err) };
  const runLog =
    deps.ws?.runs === undefined && deps.events === undefined && deps.team
      ? new RunEventLog(runLogOptions).listen(deps.team)
      : undefined;
  const hub = new WsHub(
    deps.events ?? deps.team,
    {
      fromUpgrade(request) {
        const authorization = request.headers.authorization;
        if (authorization) {
          const match = /^Bearer\s+(\S+)$/i.exec(authorization);
          return match?.[1] ? identityFor(match[1]) : undefined;
        }
        const token = sessionTokenFromCookieHeader(request.headers.cookie);
        if (!token) return undefined;
        // A cookie rides along on cross-site sockets too: only trust it from this server's own pages.
        const origin = request.headers.origin;
        if (origin !== undefined && !sameOrigin(origin, request.headers.host)) return undefined;
        return identityFor(token);
      },
      fromToken: identityFor,
    },
    log,
    runLog ? { ...deps.ws, runs: runLog } : deps.ws,
    authEvents,
  );

  // The adapter's lightweight Request must stay copyable (`new Request(c.req.raw, …)`, as Hono's
  // bodyLimit does for chunked bodies), which needs its global Request override: keep the default.
  // Its answer must be a Response: a missing or invalid Host header is the client's mistake (400),
  // anything else is ours (500, logged once); neither shows internals.
  const listener = getRequestListener(app.fetch, {
    errorHandler: (err) =>
      beforeRoutingErrorResponse(err, (unexpected) => log.error("request failed before routing", unexpected)),
  });
  // Requests without a Host header reach the adapter, which answers them with the JSON 400 above
  // (Node's own check would answer an empty 400).
  const server = deps.tls
    ? createHttpsServer({ key: deps.tls.key, cert: deps.tls.cert, requireHostHeader: false }, listener)
    : createHttpServer({ requireHostHeader: false }, listener);
  // Browsers and proxies keep connections open for about a minute; Node's 5 s default makes busy
  // clients reconnect, and a loaded server accepts new connections slowly.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.on("upgrade", (request, socket, head) => hub.handleUpgrade(request, socket, head));
  server.on("clientError", (_err, socket) => {
    if (!socket.writable) return;
    const body = errorJson(
      new DimsumError("bad_request", "bad request: the HTTP request could not be parsed"),
    );
    socket.end(
      "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: application/json; charset=UTF-8\r\n" +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  });

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      await hub.close();
      runLog?.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await checkpoints?.stop();
    })();
    return closing;
  };

  return {
    app,
    services,
    server,
    hub,
    authEvents,
    authenticateApiToken: async (bearer) => (await apiTokens.authenticate(bearer))?.actor,
    async listen(port, host = "127.0.0.1") {
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          server.off("error", reject);
          resolve();
        });
      });
      // After listening, so a busy port creates no account. A web setup racing this is fine:
      // the first account is created atomically and ensureOwner then leaves it alone.
      const owner =
        deps.ensureOwner === false
          ? undefined
          : await ensureOwner(users, deps.config.server.ownerPassword, log);
      const address = server.address() as AddressInfo;
      const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
      return {
        url: `${deps.tls ? "https" : "http"}://${shownHost}:${address.port}`,
        port: address.port,
        owner,
        close,
      };
    },
    close,
  };
}

/** Says at most once a minute that this instance counts rate limits alone because Redis failed. */
function sharedLimitsWarning(log: ServerLog): (err: unknown) => void {
  let last = 0;
  return (err) => {
    if (Date.now() - last < 60_000) return;
    last = Date.now();
    log.warn(
      `rate limits: Redis failed (${err instanceof Error ? err.message : String(err)}); this instance counts alone until it is back`,
    );
  };
}
