/**
 * CSRF defence for state changes: an `Origin` header, when present, must name this server, and
 * cookie-authenticated requests must echo the session's CSRF token in `X-CSRF-Token`. Bearer-token
 * requests carry no ambient authority, so they need no token.
 */
import type { MiddlewareHandler } from "hono";
import { forbidden } from "../../errors.js";
import { PUBLIC_API_PATHS } from "../auth/middleware.js";
import { safeEqual } from "../auth/secrets.js";
import type { AppEnv } from "../context.js";
import { sameOrigin } from "./request-origin.js";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export const CSRF_HEADER = "x-csrf-token";

/** Refuses cross-origin or token-less cookie-authenticated POST/PUT/PATCH/DELETE with 403. */
export const csrfGuard: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (SAFE_METHODS.has(c.req.method)) return next();
  const origin = c.req.header("origin");
  if (origin !== undefined && !sameOrigin(origin, c.req.header("host"))) {
    throw forbidden(`cross-origin request refused: Origin ${origin} does not match this server`);
  }
  const auth = c.get("auth");
  // Public routes (login, setup) take no authority from the cookie, so a stale cookie must not block them.
  if (auth?.method === "cookie" && auth.session && !PUBLIC_API_PATHS.has(c.req.path)) {
    const sent = c.req.header(CSRF_HEADER);
    if (!sent || !safeEqual(sent, auth.session.csrfToken)) {
      throw forbidden("missing or wrong X-CSRF-Token header (use the csrfToken from /api/auth/me)");
    }
  }
  await next();
};
