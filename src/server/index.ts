/** The HTTP/WebSocket edge: app factory, auth and security building blocks for further routes. */

export {
  type AccountStoreOptions,
  type AccountStores,
  type AccountsFactory,
  postgresAccounts,
  sqliteAccounts,
} from "./accounts.js";
export {
  createApp,
  createServer,
  DEFAULT_MAX_BODY_BYTES,
  type DimsumServer,
  type Listening,
  type ServerDeps,
  stderrLog,
} from "./app.js";
export {
  API_TOKEN_PREFIX,
  type ApiTokenRecord,
  type ApiTokenRepository,
  ApiTokenStore,
  bearerValue,
  createPostgresApiTokenStore,
  PgApiTokenStore,
} from "./auth/api-token-store.js";
export {
  type AuthEvent,
  type AuthEventListener,
  AuthEvents,
  type SessionEndReason,
} from "./auth/auth-events.js";
export { relayAuthEvents } from "./auth/auth-relay.js";
export { SESSION_COOKIE } from "./auth/cookies.js";
export { ensureOwner, OWNER_USERNAME, type OwnerCreated } from "./auth/ensure-owner.js";
export { apiTokenAuth, authenticate, PUBLIC_API_PATHS, requireAuth, requireRole } from "./auth/middleware.js";
export { hashPassword, verifyPassword } from "./auth/passwords.js";
export {
  createPostgresSessionStore,
  DEFAULT_SESSION_TTL_MS,
  type LoginSessionRepository,
  PgSessionStore,
  type SessionRecord,
  SessionStore,
} from "./auth/session-store.js";
export {
  createPostgresUserStore,
  PgUserStore,
  ROLES,
  type Role,
  type UserRecord,
  type UserRepository,
  UserStore,
} from "./auth/user-store.js";
export {
  type AppContext,
  type AppEnv,
  type AppVariables,
  type AuthState,
  actorOf,
  authOf,
  type DimsumApp,
  type ServerLog,
  type ServerServices,
} from "./context.js";
export {
  type ApiErrorBody,
  errorResponse,
  statusOf,
  toApiError,
  unauthenticated,
  type ValidationIssue,
} from "./http/errors.js";
export { issuesOf, jsonBody, paramsOf, parseOr400, queryOf } from "./http/validate.js";
export { CSRF_HEADER, csrfGuard } from "./security/csrf.js";
export { CONTENT_SECURITY_POLICY, securityHeaders } from "./security/headers.js";
export { LoginThrottle, type LoginThrottleOptions } from "./security/login-throttle.js";
export {
  type BucketOptions,
  createRateLimits,
  enforce,
  messageRateLimit,
  type RateLimitConfig,
  RateLimiter,
  rateLimited,
  type ServerRateLimits,
} from "./security/rate-limit.js";
export { clientIpOf, isSecureRequest, sameOrigin } from "./security/request-origin.js";
export { type McpCredentialRepository, SqliteMcpCredentials } from "./settings/mcp-credential-store.js";
export { McpServerSettings, type McpServerSettingsRepository } from "./settings/mcp-server-settings.js";
export {
  createPostgresMcpCredentials,
  createPostgresSettingsStore,
  PgMcpCredentials,
  PgMcpServerSettings,
  PgSettingsStore,
} from "./settings/pg-settings-store.js";
export { openSecretBox, type SecretBox, type SecretBoxOptions } from "./settings/secret-box.js";
export {
  keyEnvFor,
  keyPreview,
  type ProviderInput,
  type ProviderSettingView,
  type SettingsRepository,
  SettingsStore,
  type SettingsUpdate,
  type SettingsView,
} from "./settings/settings-store.js";
export { type WsAuthenticator, WsHub, type WsHubOptions } from "./ws/hub.js";
export type { WsIdentity } from "./ws/hub-client.js";
export { type ClientFrame, CloseCode, type ServerFrame, type TeamEventSource } from "./ws/protocol.js";
