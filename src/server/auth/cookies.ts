/** The session cookie: HttpOnly, SameSite=Lax, Path=/, Secure when the request came over TLS. */
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { parse } from "hono/utils/cookie";
import type { AppContext } from "../context.js";

export const SESSION_COOKIE = "dimsum_session";

/** Sets the session cookie; its lifetime follows the session's sliding expiry. */
export function setSessionCookie(c: AppContext, token: string, expiresAt: number): void {
  setCookie(c, SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: "Lax",
    path: "/",
    secure: c.get("secure"),
    maxAge: Math.max(0, Math.floor((expiresAt - Date.now()) / 1000)),
  });
}

/** Removes the session cookie from the browser. */
export function clearSessionCookie(c: AppContext): void {
  deleteCookie(c, SESSION_COOKIE, { path: "/", httpOnly: true, sameSite: "Lax", secure: c.get("secure") });
}

/** The session token from the request's cookie, if any. */
export function sessionCookieOf(c: AppContext): string | undefined {
  return getCookie(c, SESSION_COOKIE) || undefined;
}

/** The session token in a raw `Cookie` header (WebSocket upgrades arrive outside Hono). */
export function sessionTokenFromCookieHeader(header: string | undefined): string | undefined {
  if (!header) return undefined;
  return parse(header, SESSION_COOKIE)[SESSION_COOKIE] || undefined;
}
