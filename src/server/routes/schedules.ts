/**
 * `/api/schedules`: schedules and their runs. Members manage their own (targeting only channels they
 * can see), owners and admins everyone's; the service enforces it. Mount with
 * `createServer({ routes: [..., mountScheduleRoutes(service)] })`, after the server's auth guards.
 */
import { Hono } from "hono";
import {
  runsQuerySchema,
  scheduleInputSchema,
  schedulePatchSchema,
} from "../../schedules/schedule-schemas.js";
import type { ScheduleService } from "../../schedules/schedule-service.js";
import { type AppEnv, actorOf, type DimsumApp } from "../context.js";
import { jsonBody, paramsOf, queryOf } from "../http/validate.js";
import { teamErrorHandler } from "./team-errors.js";
import { idParam } from "./team-schemas.js";

/** The schedule routes, mounted at `/api/schedules`. */
export function scheduleRoutes(service: ScheduleService): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get("/", async (c) => c.json(await service.list(actorOf(c))));

  app.post("/", jsonBody(scheduleInputSchema), async (c) =>
    c.json(await service.create(actorOf(c), c.req.valid("json")), 201),
  );

  app.get("/:id", paramsOf(idParam), async (c) =>
    c.json(await service.get(actorOf(c), c.req.valid("param").id)),
  );

  app.patch("/:id", paramsOf(idParam), jsonBody(schedulePatchSchema), async (c) =>
    c.json(await service.update(actorOf(c), c.req.valid("param").id, c.req.valid("json"))),
  );

  app.delete("/:id", paramsOf(idParam), async (c) => {
    await service.remove(actorOf(c), c.req.valid("param").id);
    return c.body(null, 204);
  });

  // 202: the run has started (or was recorded as skipped); its outcome is under /runs.
  app.post("/:id/run", paramsOf(idParam), async (c) =>
    c.json(await service.runNow(actorOf(c), c.req.valid("param").id), 202),
  );

  app.get("/:id/runs", paramsOf(idParam), queryOf(runsQuerySchema), async (c) =>
    c.json(await service.runs(actorOf(c), c.req.valid("param").id, c.req.valid("query").limit)),
  );

  return app;
}

/** Builds the mount function for `ServerDeps.routes`. */
export function mountScheduleRoutes(service: ScheduleService): (app: DimsumApp) => void {
  return (app) => {
    const api = new Hono<AppEnv>();
    // Set before `app.route`, which wraps every handler of `api` with this handler.
    api.onError(teamErrorHandler);
    api.route("/", scheduleRoutes(service));
    app.route("/api/schedules", api);
  };
}
