/** `/api/spend`: tokens and cost per day and provider, and per day and agent (admins: all; others: their own). */
import { Hono } from "hono";
import * as z from "zod";
import type { Team } from "../../team/types.js";
import { type AppEnv, actorOf } from "../context.js";
import { queryOf } from "../http/validate.js";

const spendQuery = z.object({ days: z.coerce.number().int().min(1).max(366).default(30) });

/** The spend route, mounted at `/api/spend`. */
export function spendRoutes(team: Team): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/", queryOf(spendQuery), async (c) =>
    c.json(await team.spend(actorOf(c), { days: c.req.valid("query").days })),
  );
  return app;
}
