/**
 * `manage_schedule`: lets an agent list, create, change, run and delete schedules, acting as one
 * person (the actor it is built for) with that person's rights. Not a built-in: an agent only has it
 * when the server adds it to that agent's tools.
 */
import * as z from "zod";
import { DimsumError, isRefusal } from "../errors.js";
import type { Actor } from "../team/types.js";
import { errorResult } from "../tools/builtin/tool-error.js";
import { defineTool, type Tool } from "../tools/types.js";
import { missedPolicySchema, targetSchema, timingSchema } from "./schedule-schemas.js";
import type { ScheduleService, ScheduleView } from "./schedule-service.js";
import { describeTiming } from "./timing.js";
import type { SchedulePatch, ScheduleRunRecord, ScheduleTarget, ScheduleTiming } from "./types.js";

export const MANAGE_SCHEDULE_TOOL = "manage_schedule";

const ACTIONS = ["list", "create", "update", "enable", "disable", "run_now", "delete", "status"] as const;

const parameters = z.object({
  action: z.enum(ACTIONS).describe("What to do"),
  id: z.string().optional().describe("Schedule id (all actions except list and create)"),
  name: z.string().optional().describe("Schedule name (create, update)"),
  cron: z.string().optional().describe("Cron expression, 5 fields, e.g. '0 9 * * 1-5' (weekdays 09:00)"),
  timezone: z.string().optional().describe("IANA time zone for cron, e.g. Asia/Shanghai (default UTC)"),
  at: z.string().optional().describe("Run once at this ISO 8601 time, e.g. 2030-01-31T09:00:00+08:00"),
  everySeconds: z.number().int().optional().describe("Run every N seconds (at least 60)"),
  channelId: z.string().optional().describe("Channel the run posts in"),
  agentId: z.string().optional().describe("Agent that answers the prompt (agent target)"),
  prompt: z.string().optional().describe("What the agent is asked each time (agent target)"),
  chainInput: z
    .string()
    .optional()
    .describe("Input for the channel's collaboration chain (chain target, instead of agentId/prompt)"),
  missedPolicy: missedPolicySchema
    .optional()
    .describe("Runs missed while the server was down: skip (default) or run_once"),
});

type Args = z.output<typeof parameters>;

function fail(message: string, hint?: string): DimsumError {
  return new DimsumError("tool_failed", message, hint === undefined ? {} : { hint });
}

function requireId(args: Args): string {
  if (!args.id?.trim())
    throw fail(`"${args.action}" needs the schedule id.`, "list the schedules to find it");
  return args.id.trim();
}

function timingOf(args: Args): ScheduleTiming | undefined {
  const given = [args.cron, args.at, args.everySeconds].filter((v) => v !== undefined);
  if (given.length === 0) return undefined;
  if (given.length > 1) throw fail("Give exactly one of cron, at or everySeconds.");
  const raw =
    args.cron !== undefined
      ? { kind: "cron", expression: args.cron, timezone: args.timezone ?? "UTC" }
      : args.at !== undefined
        ? { kind: "once", at: args.at }
        : { kind: "interval", seconds: args.everySeconds };
  const parsed = timingSchema.safeParse(raw);
  if (!parsed.success) throw fail(`Bad timing: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  return parsed.data;
}

function targetOf(args: Args, current?: ScheduleTarget): ScheduleTarget | undefined {
  const touched = [args.channelId, args.agentId, args.prompt, args.chainInput].some((v) => v !== undefined);
  if (!touched) return undefined;
  const chain = args.chainInput !== undefined || (args.agentId === undefined && current?.type === "chain");
  const raw = chain
    ? {
        type: "chain",
        channelId: args.channelId ?? current?.channelId,
        input: args.chainInput ?? (current?.type === "chain" ? current.input : undefined),
      }
    : {
        type: "agent",
        channelId: args.channelId ?? current?.channelId,
        agentId: args.agentId ?? (current?.type === "agent" ? current.agentId : undefined),
        prompt: args.prompt ?? (current?.type === "agent" ? current.prompt : undefined),
      };
  const parsed = targetSchema.safeParse(raw);
  if (!parsed.success) {
    throw fail(
      `Bad target: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
      "an agent target needs channelId, agentId and prompt; a chain target needs channelId and chainInput",
    );
  }
  return parsed.data;
}

function line(s: ScheduleView): string {
  const target =
    s.target.type === "agent"
      ? `@${s.target.agentId} in ${s.target.channelId}`
      : `chain of ${s.target.channelId}`;
  const next = s.nextRunAt ? new Date(s.nextRunAt).toISOString() : "none";
  const state = s.running ? "running" : s.enabled ? "enabled" : "disabled";
  return `${s.id}  "${s.name}"  ${describeTiming(s.timing)} → ${target}  [${state}]  next: ${next}`;
}

function runLine(r: ScheduleRunRecord): string {
  const when = new Date(r.startedAt).toISOString();
  const detail = r.status === "done" ? (r.output ?? "").slice(0, 200) : (r.error ?? "");
  return `${when}  ${r.status}${detail ? `: ${detail}` : ""}`;
}

/** Builds the tool acting as `actor` over the schedule service. */
export function createManageScheduleTool(service: ScheduleService, actor: Actor): Tool {
  return defineTool({
    name: MANAGE_SCHEDULE_TOOL,
    description:
      "Manage schedules that make an agent answer a prompt in a channel (or run a channel's collaboration chain) " +
      "at cron times with a time zone, once at a time, or every N seconds (at least 60). Actions: list, create, " +
      "update, enable, disable, run_now, delete, status (one schedule's state and recent runs).",
    parameters,
    async execute(args) {
      try {
        switch (args.action) {
          case "list": {
            const all = await service.list(actor);
            return { content: all.length === 0 ? "No schedules." : all.map(line).join("\n"), data: all };
          }
          case "create": {
            const timing = timingOf(args);
            const target = targetOf(args);
            if (!args.name?.trim()) throw fail("create needs a name.");
            if (!timing) throw fail("create needs one of cron, at or everySeconds.");
            if (!target)
              throw fail("create needs a target: channelId with agentId and prompt, or chainInput.");
            const created = await service.create(actor, {
              name: args.name,
              timing,
              target,
              ...(args.missedPolicy ? { missedPolicy: args.missedPolicy } : {}),
            });
            return { content: `Created ${line(created)}`, data: created };
          }
          case "update": {
            const id = requireId(args);
            const current = await service.get(actor, id);
            const patch: SchedulePatch = {};
            if (args.name !== undefined) patch.name = args.name;
            const timing = timingOf(args);
            if (timing) patch.timing = timing;
            const target = targetOf(args, current.target);
            if (target) patch.target = target;
            if (args.missedPolicy) patch.missedPolicy = args.missedPolicy;
            if (Object.keys(patch).length === 0) throw fail("update needs at least one field to change.");
            const updated = await service.update(actor, id, patch);
            return { content: `Updated ${line(updated)}`, data: updated };
          }
          case "enable":
          case "disable": {
            const updated = await service.setEnabled(actor, requireId(args), args.action === "enable");
            return {
              content: `${args.action === "enable" ? "Enabled" : "Disabled"} ${line(updated)}`,
              data: updated,
            };
          }
          case "run_now": {
            const run = await service.runNow(actor, requireId(args));
            const content =
              run.status === "skipped"
                ? `Not started: ${run.error ?? "a run is in progress"}`
                : `Started run ${run.id}; its answer will appear in the channel (check with action "status").`;
            return { content, data: run, ...(run.status === "skipped" ? { isError: true } : {}) };
          }
          case "delete": {
            const id = requireId(args);
            await service.remove(actor, id);
            return `Deleted schedule ${id}.`;
          }
          case "status": {
            const id = requireId(args);
            const schedule = await service.get(actor, id);
            const runs = await service.runs(actor, id, 5);
            const history = runs.length === 0 ? "no runs yet" : runs.map(runLine).join("\n");
            return { content: `${line(schedule)}\nRecent runs:\n${history}`, data: { schedule, runs } };
          }
        }
      } catch (err) {
        // Team failures carry a hint the model can act on; keep it.
        return errorResult(isRefusal(err) ? fail(err.message, err.hint) : err);
      }
    },
  });
}
