/**
 * `/api/users` (owner and admin only). Admins manage members and guests; only owners create, change or
 * delete owners, and the last owner can be neither demoted nor deleted.
 */
import { Hono } from "hono";
import { conflict, forbidden, notFound } from "../../errors.js";
import { requireRole } from "../auth/middleware.js";
import type { Role, UserRecord } from "../auth/user-store.js";
import { type AppEnv, authOf } from "../context.js";
import { jsonBody } from "../http/validate.js";
import { createUserSchema, patchUserSchema } from "./schemas.js";

function userView(user: UserRecord, disabled: boolean) {
  return {
    id: user.id,
    username: user.username,
    role: user.role,
    disabled,
    createdAt: user.createdAt,
    updatedAt: user.updatedAt,
  };
}

function checkMayTouchOwner(callerRole: Role, targetRole: Role | undefined, newRole: Role | undefined): void {
  if (callerRole !== "owner" && (targetRole === "owner" || newRole === "owner")) {
    throw forbidden("only an owner can create, change or remove owner accounts");
  }
}

/** The user-management routes, mounted at `/api/users`. */
export function userRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("*", requireRole("owner", "admin"));

  app.get("/", async (c) => {
    const { users } = c.get("services");
    const list = await users.list();
    return c.json(await Promise.all(list.map(async (u) => userView(u, await users.isDisabled(u.id)))));
  });

  app.post("/", jsonBody(createUserSchema), async (c) => {
    const body = c.req.valid("json");
    checkMayTouchOwner(authOf(c).actor.role, undefined, body.role);
    const user = await c.get("services").users.create(body);
    return c.json(userView(user, false), 201);
  });

  app.patch("/:id", jsonBody(patchUserSchema), async (c) => {
    const auth = authOf(c);
    const { users, sessions, apiTokens } = c.get("services");
    const target = await users.get(c.req.param("id"));
    if (!target) throw notFound(`user ${c.req.param("id")} not found`);
    const body = c.req.valid("json");
    checkMayTouchOwner(auth.actor.role, target.role, body.role);
    if (
      target.role === "owner" &&
      body.role &&
      body.role !== "owner" &&
      (await users.countRole("owner")) <= 1
    ) {
      throw conflict("this is the last owner; make someone else owner first");
    }
    if (body.disabled === true && target.id === auth.user.id) {
      throw conflict("you cannot disable your own account");
    }
    const { disabled, ...changes } = body;
    const updated =
      changes.role !== undefined || changes.password !== undefined
        ? await users.update(target.id, changes)
        : target;
    // A reset password signs the account out everywhere (except the caller's own current session).
    if (body.password !== undefined)
      await sessions.revokeAll(target.id, auth.session?.id, "password_changed");
    if (disabled !== undefined) {
      await users.setDisabled(target.id, disabled);
      if (disabled) {
        // Everything it was signed in with ends now: sessions (their sockets close) and API tokens.
        await sessions.revokeAll(target.id, undefined, "account_disabled");
        for (const token of await apiTokens.list(target.id)) await apiTokens.delete(target.id, token.id);
      }
    }
    if (!updated) throw notFound(`user ${target.id} not found`);
    return c.json(userView(updated, await users.isDisabled(target.id)));
  });

  app.delete("/:id", async (c) => {
    const auth = authOf(c);
    const { users } = c.get("services");
    const target = await users.get(c.req.param("id"));
    if (!target) throw notFound(`user ${c.req.param("id")} not found`);
    if (target.id === auth.user.id) throw conflict("you cannot delete your own account");
    checkMayTouchOwner(auth.actor.role, target.role, undefined);
    if (target.role === "owner" && (await users.countRole("owner")) <= 1)
      throw conflict("this is the last owner");
    await users.delete(target.id);
    return c.body(null, 204);
  });

  return app;
}
