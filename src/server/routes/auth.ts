/** `/api/auth/*`: first-run setup, login/logout, the caller's sessions and password. */
import { Hono } from "hono";
import { conflict, DimsumError, forbidden, notFound } from "../../errors.js";
import { clearSessionCookie, setSessionCookie } from "../auth/cookies.js";
import type { UserRecord, UserRepository } from "../auth/user-store.js";
import { type AppContext, type AppEnv, authOf } from "../context.js";
import { jsonBody } from "../http/validate.js";
import { LoginThrottle } from "../security/login-throttle.js";
import { enforce } from "../security/rate-limit.js";
import { localeChangeSchema, loginSchema, passwordChangeSchema, setupSchema } from "./schemas.js";

/** The user fields every client may see; `mustChangePassword` while the printed one-time password is in use. */
export async function publicUser(user: UserRecord, users: UserRepository) {
  return {
    id: user.id,
    username: user.username,
    role: user.role,
    mustChangePassword: await users.hasOneTimePassword(user.id),
    /** The language the person chose for the web UI; null until they choose (the browser's then). */
    locale: (await users.getLocale(user.id)) ?? null,
  };
}

/** Signs `user` in: a new login session, its cookie, and what the sign-in answers. */
export async function startSession(c: AppContext, user: UserRecord) {
  const { sessions, users } = c.get("services");
  const { token, session } = await sessions.create(user.id, {
    userAgent: c.req.header("user-agent"),
    ip: c.get("clientIp"),
  });
  setSessionCookie(c, token, session.expiresAt);
  return { user: await publicUser(user, users), csrfToken: session.csrfToken, token };
}

/**
 * The 401 of a wrong password, warning of the pause before it comes: the attempts left, or how long
 * the next attempt must wait (also as `Retry-After`, so a form can count down to it).
 */
function wrongPassword(outlook: { attemptsLeft: number } | { waitSeconds: number }): DimsumError {
  if ("attemptsLeft" in outlook) {
    const left = outlook.attemptsLeft;
    return new DimsumError(
      "unauthenticated",
      `wrong username or password; ${left} ${left === 1 ? "attempt" : "attempts"} left before sign-in pauses`,
    );
  }
  return new DimsumError(
    "unauthenticated",
    `wrong username or password; sign-in is paused for ${outlook.waitSeconds} s`,
    { retryAfterSeconds: outlook.waitSeconds },
  );
}

export interface AuthRoutesOptions {
  /** Called with an owner's language: at setup, and when an owner chooses one. */
  onOwnerCreated?: (user: UserRecord, locale: "en" | "zh-CN") => Promise<void>;
}

/** The auth routes, mounted at `/api/auth`. */
export function authRoutes(options: AuthRoutesOptions = {}): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  // `signedIn`: whether the caller's session is valid, so a page can tell without a 401 from `/me`.
  // `providers`: the single sign-on buttons of the sign-in page; `passwordSignIn`: whether its form
  // is for everyone (off, only the owner signs in with a password).
  app.get("/status", async (c) => {
    const { users, sso } = c.get("services");
    return c.json({
      needsSetup: (await users.count()) === 0,
      signedIn: c.get("auth") !== undefined,
      passwordSignIn: await sso.store.passwordSignIn(),
      providers: (await sso.store.views()).map((p) => ({ id: p.id, name: p.name })),
    });
  });

  app.post("/setup", jsonBody(setupSchema), async (c) => {
    const { users, limits } = c.get("services");
    await enforce([[limits.loginPerIp, c.get("clientIp")]], "setup attempts");
    const body = c.req.valid("json");
    const user = await users.createFirst({ username: body.username, password: body.password });
    if (!user) throw conflict("this server is already set up; sign in instead");
    c.get("services").log.info(`owner account "${user.username}" created through the web setup`);
    if (body.locale) {
      await users.setLocale(user.id, body.locale);
      await options.onOwnerCreated?.(user, body.locale);
    }
    return c.json(await startSession(c, user), 201);
  });

  app.post("/login", jsonBody(loginSchema), async (c) => {
    const { users, limits } = c.get("services");
    const { username, password } = c.req.valid("json");
    // The pair is checked first: a waiting pair costs no token of the address's ceiling.
    const pair = LoginThrottle.key(c.get("clientIp"), username);
    const failures = await limits.loginPairs.begin(
      pair,
      "failed sign-ins for this username from your address",
    );
    await enforce([[limits.loginPerIp, c.get("clientIp")]], "login attempts");
    const user = await users.verifyLogin(username, password);
    if (!user) throw wrongPassword(limits.loginPairs.outlook(failures));
    await limits.loginPairs.succeeded(pair);
    if (await users.isDisabled(user.id)) {
      throw forbidden("this account is disabled; ask an admin to enable it");
    }
    if (user.role !== "owner" && !(await c.get("services").sso.store.passwordSignIn())) {
      throw forbidden("password sign-in is turned off on this server; use a sign-in button above the form");
    }
    return c.json(await startSession(c, user));
  });

  app.get("/me", async (c) => {
    const auth = authOf(c);
    return c.json({
      user: await publicUser(auth.user, c.get("services").users),
      csrfToken: auth.session?.csrfToken,
    });
  });

  // The web UI's language, kept with the person so it follows them to other browsers and devices.
  app.put("/locale", jsonBody(localeChangeSchema), async (c) => {
    const auth = authOf(c);
    const { locale } = c.req.valid("json");
    await c.get("services").users.setLocale(auth.user.id, locale);
    // The owner's language also gives the starter agents nobody has changed yet in that language
    // (`dimsum serve` creates the owner before anyone chose one; their first sign-in sends it).
    if (auth.user.role === "owner") await options.onOwnerCreated?.(auth.user, locale);
    return c.body(null, 204);
  });

  app.post("/logout", async (c) => {
    const auth = authOf(c);
    if (auth.session) await c.get("services").sessions.revoke(auth.user.id, auth.session.id, "logout");
    clearSessionCookie(c);
    return c.body(null, 204);
  });

  app.post("/logout-all", async (c) => {
    const auth = authOf(c);
    await c.get("services").sessions.revokeAll(auth.user.id, undefined, "logout");
    clearSessionCookie(c);
    return c.body(null, 204);
  });

  app.get("/sessions", async (c) => {
    const auth = authOf(c);
    const list = await c.get("services").sessions.listForUser(auth.user.id);
    return c.json(
      list.map((s) => ({
        id: s.id,
        createdAt: s.createdAt,
        lastSeenAt: s.lastSeenAt,
        expiresAt: s.expiresAt,
        userAgent: s.userAgent ?? null,
        current: s.id === auth.session?.id,
      })),
    );
  });

  app.delete("/sessions/:id", async (c) => {
    const auth = authOf(c);
    const id = c.req.param("id");
    if (!(await c.get("services").sessions.revoke(auth.user.id, id)))
      throw notFound(`session ${id} not found`);
    if (id === auth.session?.id) clearSessionCookie(c);
    return c.body(null, 204);
  });

  // Not in the first contract draft: lets anyone (the owner with a console-printed password above all)
  // change their own password. Other sessions are signed out; this one stays.
  app.post("/password", jsonBody(passwordChangeSchema), async (c) => {
    const auth = authOf(c);
    const { users, sessions, limits } = c.get("services");
    // Wrong current passwords count as failed sign-ins of this account from this address.
    const pair = LoginThrottle.key(c.get("clientIp"), auth.user.username);
    await limits.loginPairs.begin(pair, "wrong passwords for this account from your address");
    const body = c.req.valid("json");
    if (!(await users.checkPassword(auth.user.id, body.currentPassword))) {
      throw forbidden("the current password is wrong");
    }
    await limits.loginPairs.succeeded(pair);
    await users.update(auth.user.id, { password: body.newPassword });
    await sessions.revokeAll(auth.user.id, auth.session?.id, "password_changed");
    return c.body(null, 204);
  });

  return app;
}
