/**
 * `/api/budgets`: owners and admins list, add, change and remove the budgets of people, agents and
 * groups (with what was spent in the current period); `/api/budgets/mine`: anyone's own budgets and
 * what remains of them.
 */
import { Hono } from "hono";
import { z } from "zod";
import { conflict, notFound, unavailable } from "../../errors.js";
import type { BudgetInput, BudgetStore } from "../../store/budgets/budget-store.js";
import { isUniqueViolation } from "../../store/sql-database.js";
import { requireRole } from "../auth/middleware.js";
import { type AppContext, type AppEnv, authOf } from "../context.js";
import { jsonBody, paramsOf } from "../http/validate.js";

const limit = z.number().min(0).max(1e12).nullable().optional();
export const budgetSchema = z
  .object({
    scope: z.enum(["person", "agent", "group"]),
    scopeId: z.string().trim().min(1).max(200),
    period: z.enum(["day", "month"]),
    unit: z.enum(["usd", "tokens"]),
    softLimit: limit,
    hardLimit: limit,
    cheaperModel: z.string().trim().max(500).nullable().optional(),
  })
  .refine((b) => (b.softLimit ?? null) !== null || (b.hardLimit ?? null) !== null, {
    message: "give a soft limit, a hard limit or both",
    path: ["hardLimit"],
  })
  .refine((b) => b.softLimit == null || b.hardLimit == null || b.softLimit <= b.hardLimit, {
    message: "the soft limit must not be above the hard limit",
    path: ["softLimit"],
  });

const idParam = z.object({ id: z.string().min(1).max(100) });

function inputOf(body: z.output<typeof budgetSchema>): BudgetInput {
  return {
    scope: body.scope,
    scopeId: body.scopeId,
    period: body.period,
    unit: body.unit,
    softLimit: body.softLimit ?? null,
    hardLimit: body.hardLimit ?? null,
    cheaperModel: body.cheaperModel ? body.cheaperModel : null,
  };
}

function storeOf(c: AppContext): BudgetStore {
  const budgets = c.get("services").budgets;
  if (!budgets) throw unavailable("this server keeps no budgets");
  return budgets;
}

const taken = () =>
  conflict(
    "there is already a budget for this person, agent or group, period and unit",
    "change that one instead",
  );

/** The budget routes, mounted at `/api/budgets`. */
export function budgetRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get("/mine", async (c) => {
    const store = storeOf(c);
    const me = authOf(c).user.id;
    return c.json(await store.status(await store.applying([{ scope: "person", id: me }])));
  });

  const admins = requireRole("owner", "admin");
  app.get("/", admins, async (c) => {
    const store = storeOf(c);
    return c.json(await store.status(await store.list()));
  });

  app.post("/", admins, jsonBody(budgetSchema), async (c) => {
    try {
      return c.json(await storeOf(c).create(inputOf(c.req.valid("json"))), 201);
    } catch (err) {
      if (isUniqueViolation(err)) throw taken();
      throw err;
    }
  });

  app.put("/:id", admins, paramsOf(idParam), jsonBody(budgetSchema), async (c) => {
    const { id } = c.req.valid("param");
    try {
      const updated = await storeOf(c).update(id, inputOf(c.req.valid("json")));
      if (!updated) throw notFound(`budget ${id} not found`);
      return c.json(updated);
    } catch (err) {
      if (isUniqueViolation(err)) throw taken();
      throw err;
    }
  });

  app.delete("/:id", admins, paramsOf(idParam), async (c) => {
    const { id } = c.req.valid("param");
    if (!(await storeOf(c).delete(id))) throw notFound(`budget ${id} not found`);
    return c.body(null, 204);
  });

  return app;
}
