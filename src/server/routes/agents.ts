/** `/api/agents`: everyone lists and reads agents; owners and admins create, change and delete them. */
import { Hono } from "hono";
import type { AgentPatch, Team } from "../../team/types.js";
import { type AppEnv, actorOf } from "../context.js";
import { jsonBody, paramsOf } from "../http/validate.js";
import { agentInputSchema, agentPatchSchema, idParam, soulSchema } from "./team-schemas.js";

/** The agent routes, mounted at `/api/agents`. */
export function agentRoutes(team: Team): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get("/", async (c) => c.json(await team.listAgents(actorOf(c))));

  app.post("/", jsonBody(agentInputSchema), async (c) => {
    return c.json(await team.createAgent(actorOf(c), c.req.valid("json")), 201);
  });

  app.get("/:id", paramsOf(idParam), async (c) => {
    return c.json(await team.getAgent(actorOf(c), c.req.valid("param").id));
  });

  app.patch("/:id", paramsOf(idParam), jsonBody(agentPatchSchema), async (c) => {
    const { model, toolsAllow, ...rest } = c.req.valid("json");
    const patch: AgentPatch = { ...rest };
    // The facade reads `model: ""` and a present-but-empty `toolsAllow` as "back to the default".
    if (model !== undefined) patch.model = model ?? "";
    if (toolsAllow !== undefined) patch.toolsAllow = toolsAllow ?? undefined;
    return c.json(await team.updateAgent(actorOf(c), c.req.valid("param").id, patch));
  });

  app.delete("/:id", paramsOf(idParam), async (c) => {
    await team.deleteAgent(actorOf(c), c.req.valid("param").id);
    return c.body(null, 204);
  });

  app.get("/:id/soul", paramsOf(idParam), async (c) => {
    return c.json(await team.getSoul(actorOf(c), c.req.valid("param").id));
  });

  app.put("/:id/soul", paramsOf(idParam), jsonBody(soulSchema), async (c) => {
    const { content } = c.req.valid("json");
    return c.json(await team.putSoul(actorOf(c), c.req.valid("param").id, content));
  });

  return app;
}
