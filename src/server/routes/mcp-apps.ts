/**
 * MCP Apps of chat answers (`/api/channels/:id/mcp-apps/:runId/:callId`): the app's document,
 * served to the chat's iframe with the app's own sandboxing Content-Security-Policy (an opaque origin:
 * no cookies, no reach into the page, the network only to the origins the resource declared), and
 * the app's `tools/call` requests with their approvals. Someone who may not read the chat gets 404.
 */
import { Hono } from "hono";
import * as z from "zod";
import { appContentSecurityPolicy } from "../../mcp/app-meta.js";
import type { Team } from "../../team/types.js";
import { type AppEnv, actorOf } from "../context.js";
import { jsonBody, paramsOf } from "../http/validate.js";
import { messageRateLimit } from "../security/rate-limit.js";

const appParams = z.object({
  id: z.string().min(1).max(200),
  runId: z.string().min(1).max(200),
  callId: z.string().min(1).max(200),
});
const approvalParams = appParams.extend({ approvalId: z.uuid() });
const callSchema = z.object({
  name: z.string().min(1).max(200),
  arguments: z.record(z.string(), z.unknown()).default({}),
});
const decisionSchema = z.object({ decision: z.enum(["approve", "reject"]), always: z.boolean().optional() });

/** The MCP App routes, mounted at `/api`. */
export function mcpAppRoutes(team: Team): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const base = "/channels/:id/mcp-apps/:runId/:callId";
  const refOf = (p: z.infer<typeof appParams>) => ({
    channelId: p.id,
    runId: p.runId,
    callId: p.callId,
  });

  app.get(base, paramsOf(appParams), async (c) => {
    const resource = await team.mcpAppResource(actorOf(c), refOf(c.req.valid("param")));
    return c.body(resource.html, 200, {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": appContentSecurityPolicy(resource.csp),
      // Framed by the chat only; the page's own headers say DENY.
      "x-frame-options": "SAMEORIGIN",
      "cache-control": "private, no-store",
      "x-content-type-options": "nosniff",
    });
  });

  app.post(`${base}/tools/call`, messageRateLimit, paramsOf(appParams), jsonBody(callSchema), async (c) => {
    const body = c.req.valid("json");
    const outcome = await team.mcpAppCall(actorOf(c), refOf(c.req.valid("param")), body.name, body.arguments);
    return c.json(outcome);
  });

  app.post(`${base}/approvals/:approvalId`, paramsOf(approvalParams), jsonBody(decisionSchema), async (c) => {
    const params = c.req.valid("param");
    const body = c.req.valid("json");
    const outcome = await team.mcpAppDecide(actorOf(c), refOf(params), params.approvalId, {
      decision: body.decision,
      ...(body.always ? { always: true } : {}),
    });
    return c.json(outcome);
  });
  return app;
}
