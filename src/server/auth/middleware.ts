/**
 * Who is calling: a session cookie or `Authorization: Bearer <session token>` on `/api`, an API token
 * on the OpenAI-compatible endpoint. Each sets `auth` (with the `Actor` the team facade wants).
 */
import type { MiddlewareHandler } from "hono";
import { forbidden } from "../../errors.js";
import type { AppEnv, AuthState } from "../context.js";
import { unauthenticated } from "../http/errors.js";
import { bearerValue } from "./api-token-store.js";
import { sessionCookieOf, setSessionCookie } from "./cookies.js";
import type { Role } from "./user-store.js";

/** Routes reachable without signing in. */
export const PUBLIC_API_PATHS: ReadonlySet<string> = new Set([
  "/api/auth/status",
  "/api/auth/setup",
  "/api/auth/login",
]);

/**
 * Resolves the caller from a bearer session token or the session cookie; never rejects by itself.
 * A request with an Authorization header is judged by that header alone (no cookie fallback).
 */
export const authenticate: MiddlewareHandler<AppEnv> = async (c, next) => {
  const { sessions } = c.get("services");
  const header = c.req.header("authorization");
  let auth: AuthState | undefined;
  if (header !== undefined) {
    const token = bearerValue(header);
    const found = token ? await sessions.authenticate(token) : undefined;
    if (found) {
      auth = {
        actor: { userId: found.user.id, role: found.user.role },
        user: found.user,
        session: found.session,
        method: "bearer",
      };
    }
  } else {
    const token = sessionCookieOf(c);
    const found = token ? await sessions.authenticate(token) : undefined;
    if (token && found) {
      auth = {
        actor: { userId: found.user.id, role: found.user.role },
        user: found.user,
        session: found.session,
        method: "cookie",
      };
      if (found.refreshed) setSessionCookie(c, token, found.session.expiresAt);
    }
  }
  c.set("auth", auth);
  await next();
};

/** 401 unless signed in, except on the public auth routes. */
export const requireAuth: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!c.get("auth") && !PUBLIC_API_PATHS.has(c.req.path)) throw unauthenticated();
  await next();
};

/** 403 unless the caller has one of the roles. */
export function requireRole(...roles: Role[]): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const auth = c.get("auth");
    if (!auth) throw unauthenticated();
    if (!roles.includes(auth.actor.role)) throw forbidden(`this needs the ${roles.join(" or ")} role`);
    await next();
  };
}

/**
 * Authenticates `Authorization: Bearer dsk_…` API tokens (the OpenAI-compatible endpoint). Such
 * requests carry no cookie authority, so they need no CSRF token.
 */
export const apiTokenAuth: MiddlewareHandler<AppEnv> = async (c, next) => {
  const found = await c.get("services").apiTokens.authenticate(c.req.header("authorization"));
  if (!found)
    throw unauthenticated("send Authorization: Bearer <API token> (create one under Settings → API tokens)");
  c.set("auth", { actor: found.actor, user: found.user, session: undefined, method: "api_token" });
  await next();
};
