/**
 * The team template file: one JSON document (`"format": "dimsum-template", "version": 1`) holding an
 * agent (persona, settings, skill names) or a team (agents, one group with its leader and chain, and
 * optional schedules). It carries no ids of the server it came from, no owner and no secrets: agents
 * are named by a slug local to the file, which the import maps to free agent ids.
 */
import * as z from "zod";
import { agentSettingsFields, MAX_SOUL_CHARS } from "../agent-schemas.js";

export const TEMPLATE_FORMAT = "dimsum-template";
export const TEMPLATE_VERSION = 1;
/** Most agents one team template may create. */
export const MAX_TEMPLATE_AGENTS = 12;

const SLUG = /^[a-z0-9][a-z0-9_-]{0,39}$/;
const RESERVED = new Set(["all", "chain", "system", "everyone", "here"]);

const slug = z
  .string()
  .regex(SLUG, "1 to 40 lower-case letters, digits, - or _, starting with a letter or digit")
  .refine(
    (id) => !RESERVED.has(id),
    "a mention keyword (all, chain, system, everyone, here) cannot be an id",
  );
const text = (max: number) => z.string().max(max, `at most ${max} characters`);

/** One agent: its persona (SOUL.md) and settings. No model id is required: left out, the server's default. */
export const agentTemplateSchema = z
  .object({
    id: slug,
    name: z.string().trim().min(1, "required").max(80, "at most 80 characters"),
    emoji: text(32).optional(),
    /** The SOUL.md persona, whole. */
    persona: text(MAX_SOUL_CHARS).default(""),
    /** `provider:model` or a comma list (a fallback chain); left out, the importing server's default. */
    model: z.string().min(1).max(800).optional(),
    /** Skills are named: they are shared folders on each server, not owned by an agent. */
    ...agentSettingsFields,
  })
  .strict();

const chainStepSchema = z
  .object({
    agent: slug,
    requiresApproval: z.boolean().default(false),
    instruction: text(4000).optional(),
  })
  .strict();

/** The group: its agents (by template slug), the one answering un-mentioned messages, the chain. */
export const groupTemplateSchema = z
  .object({
    name: z.string().trim().min(1, "required").max(100, "at most 100 characters"),
    /** Template slugs of the group's agents; left out, every agent of the template. */
    agents: z.array(slug).max(MAX_TEMPLATE_AGENTS).optional(),
    leader: slug.optional(),
    chain: z.array(chainStepSchema).max(12, "at most 12 steps").default([]),
    queueMode: z.enum(["steer", "followup", "collect", "interrupt"]).optional(),
  })
  .strict();

const longText = z.string().trim().min(1, "required").max(8000, "at most 8000 characters");

/** A schedule on the template's group: the chain with an input, or one agent with a prompt. */
export const scheduleTemplateSchema = z
  .object({
    name: z.string().trim().min(1, "required").max(100, "at most 100 characters"),
    enabled: z.boolean().optional(),
    timing: z.discriminatedUnion("kind", [
      z.object({
        kind: z.literal("cron"),
        expression: z.string().trim().min(1, "required").max(200),
        timezone: z.string().trim().min(1).max(100).default("UTC"),
      }),
      z.object({ kind: z.literal("interval"), seconds: z.number().int().min(60, "at least 60 seconds") }),
    ]),
    target: z.discriminatedUnion("type", [
      z.object({ type: z.literal("chain"), input: longText }).strict(),
      z.object({ type: z.literal("agent"), agent: slug, prompt: longText }).strict(),
    ]),
    missedPolicy: z.enum(["skip", "run_once"]).optional(),
  })
  .strict();

const header = {
  format: z.literal(TEMPLATE_FORMAT, { error: `must be "${TEMPLATE_FORMAT}"` }),
  version: z.literal(TEMPLATE_VERSION, {
    error: `this server reads template version ${TEMPLATE_VERSION}; export the template again from a matching Dimsum`,
  }),
  name: z.string().trim().min(1, "required").max(100, "at most 100 characters"),
  description: text(1000).optional(),
};

export const agentOnlyTemplateSchema = z
  .object({ ...header, kind: z.literal("agent"), agent: agentTemplateSchema })
  .strict();

export const teamTemplateSchema = z
  .object({
    ...header,
    kind: z.literal("team"),
    agents: z
      .array(agentTemplateSchema)
      .min(1, "a team needs at least one agent")
      .max(MAX_TEMPLATE_AGENTS, `at most ${MAX_TEMPLATE_AGENTS} agents`),
    group: groupTemplateSchema,
    schedules: z.array(scheduleTemplateSchema).max(5, "at most 5 schedules").default([]),
  })
  .strict()
  .superRefine((t, ctx) => {
    const ids = new Set<string>();
    t.agents.forEach((a, i) => {
      if (ids.has(a.id))
        ctx.addIssue({ code: "custom", path: ["agents", i, "id"], message: `"${a.id}" twice` });
      ids.add(a.id);
    });
    const known = (id: string, path: (string | number)[]) => {
      if (!ids.has(id)) ctx.addIssue({ code: "custom", path, message: `no agent "${id}" in this template` });
    };
    const members = new Set(t.group.agents ?? ids);
    for (const [i, id] of (t.group.agents ?? []).entries()) known(id, ["group", "agents", i]);
    const inGroup = (id: string, path: (string | number)[]) => {
      if (ids.has(id) && !members.has(id)) {
        ctx.addIssue({ code: "custom", path, message: `"${id}" is not one of the group's agents` });
      } else known(id, path);
    };
    if (t.group.leader !== undefined) inGroup(t.group.leader, ["group", "leader"]);
    for (const [i, s] of t.group.chain.entries()) inGroup(s.agent, ["group", "chain", i, "agent"]);
    t.schedules.forEach((s, i) => {
      if (s.target.type === "agent") inGroup(s.target.agent, ["schedules", i, "target", "agent"]);
      if (s.target.type === "chain" && t.group.chain.length === 0) {
        ctx.addIssue({
          code: "custom",
          path: ["schedules", i, "target"],
          message: "the group has no chain to start",
        });
      }
    });
  });

export const templateSchema = z.discriminatedUnion("kind", [agentOnlyTemplateSchema, teamTemplateSchema]);

export type AgentTemplate = z.output<typeof agentTemplateSchema>;
export type GroupTemplate = z.output<typeof groupTemplateSchema>;
export type ScheduleTemplate = z.output<typeof scheduleTemplateSchema>;
export type AgentOnlyTemplate = z.output<typeof agentOnlyTemplateSchema>;
export type TeamTemplate = z.output<typeof teamTemplateSchema>;
export type Template = z.output<typeof templateSchema>;
