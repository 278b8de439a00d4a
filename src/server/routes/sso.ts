/**
 * Single sign-on over OpenID Connect. `/api/auth/sso/:id/start` sends the browser to the provider,
 * `/api/auth/sso/:id/callback` takes it back, signs the person in and returns to the page they came
 * from (or to the sign-in page with the reason it failed). What the attempt needs in between rides
 * in a sealed, short-lived cookie, so any instance can finish it. `/api/sso` is the owner's and
 * admins' set-up: providers and whether password sign-in stays on.
 */
import { Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import * as z from "zod";
import { DimsumError, notFound, toDimsumError } from "../../errors.js";
import { recordAudit } from "../audit/record.js";
import { requireRole } from "../auth/middleware.js";
import type { AppContext, AppEnv } from "../context.js";
import { jsonBody } from "../http/validate.js";
import { enforce } from "../security/rate-limit.js";
import type { PendingSignIn } from "../sso/oidc-client.js";
import { accountFor } from "../sso/sso-accounts.js";
import { startSession } from "./auth.js";

const COOKIE = "dimsum_sso";
const COOKIE_PATH = "/api/auth/sso";

/** A path on this server to return to (never another site). */
function safeReturn(value: string | undefined): string {
  return value?.startsWith("/") && !value.startsWith("//") && !value.startsWith("/\\") ? value : "/";
}

function callbackUrl(c: AppContext, id: string): string {
  return `${new URL(c.req.url).origin}/api/auth/sso/${encodeURIComponent(id)}/callback`;
}

/** Back to the sign-in page, which shows why. */
function failed(c: AppContext, err: unknown) {
  const error = toDimsumError(err);
  if (error.code === "internal") c.get("services").log.error("a single sign-on failed", err);
  const reason = error.code === "internal" ? "the server could not finish the sign-in" : error.message;
  return c.redirect(`/?signInError=${encodeURIComponent(reason)}`, 302);
}

function pendingOf(c: AppContext, id: string): PendingSignIn {
  const sealed = getCookie(c, COOKIE);
  deleteCookie(c, COOKIE, { path: COOKIE_PATH, httpOnly: true, sameSite: "Lax", secure: c.get("secure") });
  const opened = sealed ? c.get("services").sso.box.open(sealed) : undefined;
  const pending = opened ? (JSON.parse(opened) as PendingSignIn) : undefined;
  if (!pending || pending.providerId !== id || pending.expiresAt < Date.now()) {
    throw new DimsumError("forbidden", "this sign-in was not started in this browser, or it took too long", {
      hint: "start the sign-in again from the sign-in page",
    });
  }
  if (c.req.query("state") !== pending.state) {
    throw new DimsumError("forbidden", "the provider's answer does not belong to this sign-in (state)", {
      hint: "start the sign-in again from the sign-in page",
    });
  }
  return pending;
}

/** The sign-in routes, mounted at `/api/auth/sso` before the session guards. */
export function ssoSignInRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get("/:id/start", async (c) => {
    const { sso, limits } = c.get("services");
    try {
      const id = c.req.param("id");
      await enforce([[limits.loginPerIp, c.get("clientIp")]], "sign-in attempts");
      const provider = await sso.store.provider(id, sso.box);
      if (!provider) throw notFound(`no sign-in provider "${id}"`);
      const { url, pending } = await sso.oidc.begin(
        provider,
        callbackUrl(c, id),
        safeReturn(c.req.query("returnTo")),
      );
      setCookie(c, COOKIE, sso.box.seal(JSON.stringify(pending)), {
        httpOnly: true,
        // Lax: the provider's redirect back is a top-level GET, which carries it.
        sameSite: "Lax",
        path: COOKIE_PATH,
        secure: c.get("secure"),
        maxAge: Math.floor((pending.expiresAt - Date.now()) / 1000),
      });
      return c.redirect(url, 302);
    } catch (err) {
      return failed(c, err);
    }
  });

  app.get("/:id/callback", async (c) => {
    const { sso, users, log } = c.get("services");
    try {
      const id = c.req.param("id");
      const pending = pendingOf(c, id);
      const providerError = c.req.query("error");
      if (providerError) {
        throw new DimsumError(
          "forbidden",
          `the provider refused: ${c.req.query("error_description") ?? providerError}`,
          { hint: "start the sign-in again, or ask an admin to check the provider's client" },
        );
      }
      const provider = await sso.store.provider(id, sso.box);
      if (!provider) throw notFound(`no sign-in provider "${id}"`);
      // One attempt, one sign-in: a replayed callback (its code, on any instance) is refused here.
      if (!(await sso.store.useOnce(pending.state))) {
        throw new DimsumError("forbidden", "this sign-in was used already", {
          hint: "start the sign-in again from the sign-in page",
        });
      }
      const claims = await sso.oidc.finish(provider, new URL(c.req.url), pending);
      let user: Awaited<ReturnType<typeof accountFor>>;
      try {
        user = await accountFor(provider, claims, users, sso.store);
      } catch (err) {
        // Refused after the provider vouched for them: who it was is known, so it is recorded.
        await recordAudit(c, "auth.sign_in_failed", {
          actor: { name: claims.email ?? claims.subject },
          after: { provider: id, reason: err instanceof Error ? err.message : String(err) },
        });
        throw err;
      }
      log.info(`"${user.username}" signed in with ${provider.name}`);
      await startSession(c, user);
      await recordAudit(c, "auth.sign_in", {
        actor: { id: user.id, name: user.username },
        after: { provider: id },
      });
      return c.redirect(pending.returnTo, 302);
    } catch (err) {
      return failed(c, err);
    }
  });

  return app;
}

const providerIdSchema = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9-]{0,31}$/,
    "1-32 lowercase letters, digits or '-', starting with a letter or digit",
  );

const providerSchema = z.object({
  name: z.string().trim().min(1).max(60),
  issuer: z.string().trim().url(),
  clientId: z.string().trim().min(1).max(300),
  /** Left out: the stored secret stays. "" for a public client. */
  clientSecret: z.string().max(2000).optional(),
  allowedDomains: z
    .array(
      z
        .string()
        .trim()
        .toLowerCase()
        .regex(/^@?[a-z0-9.-]+\.[a-z]{2,}$/, "a domain such as example.com"),
    )
    .max(50)
    .default([]),
  roleClaim: z.string().trim().max(100).default(""),
  roleMap: z.record(z.string().max(200), z.enum(["admin", "member", "guest"])).default({}),
  newAccounts: z.enum(["create", "invited"]).default("invited"),
});

/** The set-up routes, mounted at `/api/sso` (owner and admins). */
export function ssoSettingsRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("*", requireRole("owner", "admin"));

  app.get("/", async (c) => {
    const { store } = c.get("services").sso;
    return c.json({
      passwordSignIn: await store.passwordSignIn(),
      providers: await store.views(),
      // `:id` stands for each provider's id (the page fills it in).
      callbackUrl: `${new URL(c.req.url).origin}/api/auth/sso/:id/callback`,
    });
  });

  app.put("/providers/:id", jsonBody(providerSchema), async (c) => {
    const id = providerIdSchema.safeParse(c.req.param("id"));
    if (!id.success) {
      throw new DimsumError("invalid", `"${c.req.param("id")}" cannot be a provider id`, {
        hint: "use 1-32 lowercase letters, digits or '-'",
      });
    }
    const body = c.req.valid("json");
    const { store, box } = c.get("services").sso;
    const exists = (await store.views()).some((p) => p.id === id.data);
    if (!exists && body.clientSecret === undefined) {
      throw new DimsumError("invalid", "a new provider needs its client secret", {
        hint: 'send clientSecret ("" for a public client that uses PKCE alone)',
      });
    }
    await store.save(
      {
        id: id.data,
        ...body,
        ...(body.clientSecret !== undefined ? { clientSecret: body.clientSecret } : {}),
      },
      box,
    );
    return c.json(
      (await store.views()).find((p) => p.id === id.data),
      exists ? 200 : 201,
    );
  });

  app.delete("/providers/:id", async (c) => {
    const id = c.req.param("id");
    if (!(await c.get("services").sso.store.remove(id))) throw notFound(`no sign-in provider "${id}"`);
    return c.body(null, 204);
  });

  app.put("/password-sign-in", jsonBody(z.object({ enabled: z.boolean() })), async (c) => {
    const { enabled } = c.req.valid("json");
    const { store } = c.get("services").sso;
    if (!enabled && (await store.views()).length === 0) {
      throw new DimsumError("conflict", "password sign-in is the only way in while no provider is set up", {
        hint: "add a sign-in provider first",
      });
    }
    await store.setPasswordSignIn(enabled);
    return c.body(null, 204);
  });

  return app;
}
