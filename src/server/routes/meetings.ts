/**
 * Meetings in groups: start one (the form; `/meeting <topic>` goes through the messages route), the
 * Decisions list of a group (searchable), a meeting's state, people's actions on it, the minutes as
 * Markdown, and starting an action item.
 */
import { Hono } from "hono";
import * as z from "zod";
import type { MeetingInput, Team } from "../../team/types.js";
import { type AppEnv, actorOf } from "../context.js";
import { jsonBody, paramsOf } from "../http/validate.js";
import { idParam } from "./team-schemas.js";

const agentId = z.string().min(1).max(40);
const startSchema = z
  .object({
    topic: z.string().trim().min(1, "required").max(2000, "at most 2000 characters"),
    participants: z.array(agentId).min(1, "at least one agent").max(20).optional(),
    rounds: z.number().int("a whole number").min(1).max(10).optional(),
    moderatorId: agentId.optional(),
    budget: z
      .object({
        tokens: z.number().int().positive().max(100_000_000).optional(),
        costUsd: z.number().positive().max(100_000).optional(),
      })
      .strict()
      .optional(),
    decision: z
      .discriminatedUnion("kind", [
        z.object({ kind: z.literal("free") }).strict(),
        z
          .object({
            kind: z.literal("choice"),
            options: z.array(z.string().trim().min(1).max(200)).min(2, "at least two options").max(10),
          })
          .strict(),
      ])
      .optional(),
  })
  .strict();
const actionSchema = z.object({ action: z.enum(["end", "more", "stop"]) }).strict();
const itemParams = z.object({
  id: z.string().min(1).max(200),
  index: z.coerce.number().int().min(0).max(1000),
});

/** The meeting routes, mounted at `/api`. */
export function meetingRoutes(team: Team): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.post("/channels/:id/meetings", paramsOf(idParam), jsonBody(startSchema), async (c) => {
    const body = c.req.valid("json");
    const input: MeetingInput = { topic: body.topic };
    if (body.participants) input.participants = body.participants;
    if (body.rounds !== undefined) input.rounds = body.rounds;
    if (body.moderatorId) input.moderatorId = body.moderatorId;
    if (body.budget) {
      input.budget = {
        ...(body.budget.tokens !== undefined ? { tokens: body.budget.tokens } : {}),
        ...(body.budget.costUsd !== undefined ? { costUsd: body.budget.costUsd } : {}),
      };
    }
    if (body.decision) input.decision = body.decision;
    return c.json(await team.startMeeting(actorOf(c), c.req.valid("param").id, input), 201);
  });

  app.get("/channels/:id/meetings", paramsOf(idParam), async (c) => {
    const query = (c.req.query("q") ?? "").slice(0, 200).trim();
    return c.json(await team.listMeetings(actorOf(c), c.req.valid("param").id, query ? { query } : {}));
  });

  app.get("/meetings/:id", paramsOf(idParam), async (c) =>
    c.json(await team.getMeeting(actorOf(c), c.req.valid("param").id)),
  );

  app.post("/meetings/:id/actions", paramsOf(idParam), jsonBody(actionSchema), async (c) =>
    c.json(await team.meetingAction(actorOf(c), c.req.valid("param").id, c.req.valid("json"))),
  );

  app.get("/meetings/:id/minutes.md", paramsOf(idParam), async (c) => {
    const markdown = await team.meetingMarkdown(actorOf(c), c.req.valid("param").id);
    c.header("Content-Type", "text/markdown; charset=utf-8");
    c.header("Content-Disposition", 'attachment; filename="minutes.md"');
    return c.body(markdown);
  });

  app.post("/meetings/:id/action-items/:index/start", paramsOf(itemParams), async (c) => {
    const { id, index } = c.req.valid("param");
    return c.json(await team.startActionItem(actorOf(c), id, index), 201);
  });

  return app;
}
