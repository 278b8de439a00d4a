/** `/api/flows`: a collaboration flow's state, and the people's actions on it (approve, edit, skip…). */
import { Hono } from "hono";
import type { FlowAction, Team } from "../../team/types.js";
import { type AppEnv, actorOf } from "../context.js";
import { jsonBody, paramsOf } from "../http/validate.js";
import { flowActionSchema, idParam } from "./team-schemas.js";

/** The flow routes, mounted at `/api/flows`. */
export function flowRoutes(team: Team): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get("/:id", paramsOf(idParam), async (c) =>
    c.json(await team.getFlow(actorOf(c), c.req.valid("param").id)),
  );

  app.post("/:id/actions", paramsOf(idParam), jsonBody(flowActionSchema), async (c) => {
    const action: FlowAction = c.req.valid("json");
    return c.json(await team.flowAction(actorOf(c), c.req.valid("param").id, action));
  });

  return app;
}
