/** `/api/models/status` (every signed-in user): whether the default model can run, and the fix if not. */
import { Hono } from "hono";
import type { AppEnv } from "../context.js";
import { modelStatus } from "../settings/model-status.js";

/** The model routes, mounted at `/api/models`. */
export function modelRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/status", (c) => {
    const { settings, config } = c.get("services");
    const status = modelStatus(settings, config);
    return c.json({
      ready: status.ready,
      defaultModel: status.defaultModel ?? null,
      provider: status.provider ?? null,
      problem: status.problem ?? null,
      message: status.message ?? null,
    });
  });
  return app;
}
