/**
 * `/api/runs`: the queue of answers waiting to start (`/queue`), a run's state, cancelling it (alone: other runs in the channel go on), its trace, and
 * the answers of the person it acts for to MCP servers' requests for input.
 */
import { Hono } from "hono";
import type { Team } from "../../team/types.js";
import { type AppEnv, actorOf } from "../context.js";
import { jsonBody, paramsOf } from "../http/validate.js";
import {
  approvalAnswerSchema,
  approvalParams,
  elicitationAnswerSchema,
  elicitationParams,
  idParam,
} from "./team-schemas.js";

/** The run routes, mounted at `/api/runs`. */
export function runRoutes(team: Team): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  // Before `/:id`: the queue of answers waiting to start on this instance (owners and admins).
  app.get("/queue", (c) => c.json(team.runQueue(actorOf(c))));

  app.get("/:id", paramsOf(idParam), async (c) =>
    c.json(await team.getRun(actorOf(c), c.req.valid("param").id)),
  );

  app.post("/:id/cancel", paramsOf(idParam), async (c) => {
    return c.json(await team.cancelRun(actorOf(c), c.req.valid("param").id));
  });

  app.get("/:id/trace", paramsOf(idParam), async (c) => {
    return c.json(await team.getRunTrace(actorOf(c), c.req.valid("param").id));
  });

  app.post("/:id/approvals/:callId", paramsOf(approvalParams), jsonBody(approvalAnswerSchema), async (c) => {
    const { id, callId } = c.req.valid("param");
    const body = c.req.valid("json");
    const answer = {
      decision: body.decision,
      ...(body.always ? { always: true } : {}),
      ...(body.reason ? { reason: body.reason } : {}),
    };
    return c.json(await team.answerApproval(actorOf(c), id, callId, answer));
  });

  app.post(
    "/:id/elicitations/:elicitationId",
    paramsOf(elicitationParams),
    jsonBody(elicitationAnswerSchema),
    async (c) => {
      const { id, elicitationId } = c.req.valid("param");
      const body = c.req.valid("json");
      const answer = body.content ? { action: body.action, content: body.content } : { action: body.action };
      return c.json(await team.answerElicitation(actorOf(c), id, elicitationId, answer));
    },
  );

  return app;
}
