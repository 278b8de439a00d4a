/**
 * The Hono environment every route shares: the node request/response bindings, and the variables
 * middleware sets (services, client address, the authenticated caller).
 */
import type { HttpBindings } from "@hono/node-server";
import type { Context, Hono } from "hono";
import type { ShellOffer } from "../capabilities/shell-offer.js";
import type { DimsumConfig } from "../config/load-config.js";
import type { AuditLog } from "../store/audit/audit-log.js";
import type { BudgetStore } from "../store/budgets/budget-store.js";
import type { Actor } from "../team/types.js";
import type { ApiTokenRepository } from "./auth/api-token-store.js";
import type { LoginSessionRepository, SessionRecord } from "./auth/session-store.js";
import type { UserRecord, UserRepository } from "./auth/user-store.js";
import { unauthenticated } from "./http/errors.js";
import type { ServerRateLimits } from "./security/rate-limit.js";
import type { SecretBox } from "./settings/secret-box.js";
import type { SettingsRepository } from "./settings/settings-store.js";
import type { OidcClients } from "./sso/oidc-client.js";
import type { SsoStore } from "./sso/sso-store.js";

/** Where the server writes what operators should see. */
export interface ServerLog {
  info(message: string): void;
  warn(message: string): void;
  error(message: string, err?: unknown): void;
}

/** Long-lived services created once per server and reachable from every request. */
export interface ServerServices {
  config: DimsumConfig;
  users: UserRepository;
  sessions: LoginSessionRepository;
  apiTokens: ApiTokenRepository;
  settings: SettingsRepository;
  /** Single sign-on: its settings and links, the OpenID Connect client, the box sealing its secrets. */
  sso: { store: SsoStore; oidc: OidcClients; box: SecretBox };
  limits: ServerRateLimits;
  log: ServerLog;
  trustProxy: boolean;
  /** Whether agents get `execute_command` and why (undefined when no team is served). */
  shell: ShellOffer | undefined;
  /** The audit log (see server/audit); absent: nothing is recorded. */
  audit?: AuditLog;
  /** The budgets (Settings → Spend); absent: `/api/budgets` answers 503. */
  budgets?: BudgetStore;
}

/** How the caller proved who they are. */
export interface AuthState {
  actor: Actor;
  user: UserRecord;
  /** The login session (cookie or bearer session token); undefined for API tokens. */
  session: SessionRecord | undefined;
  method: "cookie" | "bearer" | "api_token";
}

export interface AppVariables {
  services: ServerServices;
  /** The client's address: the socket's, or the proxy-reported one when trustProxy is on. */
  clientIp: string;
  /** True when the request came over TLS (or a trusted proxy says it did). */
  secure: boolean;
  auth: AuthState | undefined;
}

export type AppEnv = { Bindings: HttpBindings; Variables: AppVariables };
export type DimsumApp = Hono<AppEnv>;
export type AppContext = Context<AppEnv>;

/** The authenticated caller, or a 401 (for routes reached without the auth middleware's guard). */
export function authOf(c: AppContext): AuthState {
  const auth = c.get("auth");
  if (!auth) throw unauthenticated();
  return auth;
}

/** The authenticated caller as the team facade wants it. */
export function actorOf(c: AppContext): Actor {
  return authOf(c).actor;
}
