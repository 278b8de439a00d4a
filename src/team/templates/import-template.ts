/**
 * Imports a template for the calling person, with their rights: its agents (ids and names that are
 * taken get a suffix, and mentions of renamed agents in personas and instructions follow), then for a
 * team its group (the caller its only person), chain and schedules. All or nothing: when any step is
 * refused, what the import had created is deleted again and the refusal names the template's field.
 */
import { DimsumError, toDimsumError } from "../../errors.js";
import { withPresent } from "../../store/present-fields.js";
import { assertCanCreateChannel, assertCanManageAgents } from "../access.js";
import type { Actor, AgentInput, AgentRecord, ChannelRecord, Team } from "../types.js";
import type { TemplateSchedules } from "./template-schedules.js";
import type { AgentTemplate, ScheduleTemplate, TeamTemplate, Template } from "./template-schema.js";

export interface ImportResult {
  kind: Template["kind"];
  agents: AgentRecord[];
  /** The group a team template created. */
  channel?: ChannelRecord;
  /** Ids of the schedules created. */
  schedules: string[];
  /** Agents whose id was taken here: the template's id and the one given instead. */
  renamed: Array<{ from: string; to: string }>;
  /** What was left out, and why (e.g. schedules on a server without a scheduler). */
  notes: string[];
}

export interface ImportDeps {
  team: Team;
  /** Without it, a template's schedules are left out (with a note). */
  schedules?: TemplateSchedules;
}

/** Creates everything the (already validated) template describes, or nothing. */
export async function importTemplate(
  deps: ImportDeps,
  actor: Actor,
  template: Template,
): Promise<ImportResult> {
  assertCanManageAgents(actor);
  if (template.kind === "team") assertCanCreateChannel(actor);
  const { team } = deps;
  const agentTemplates = template.kind === "agent" ? [template.agent] : template.agents;
  const ids = freeIds(
    agentTemplates.map((a) => a.id),
    new Set((await team.listAgents(actor)).map((a) => a.id)),
  );
  const result: ImportResult = { kind: template.kind, agents: [], schedules: [], renamed: [], notes: [] };
  for (const [from, to] of ids) if (from !== to) result.renamed.push({ from, to });
  const rename = mentionRewriter(ids);
  const takenNames = new Set((await team.listAgents(actor)).map((a) => a.name));
  try {
    for (const [index, agent] of agentTemplates.entries()) {
      const path = template.kind === "agent" ? "agent" : `agents.${index}`;
      const input = agentInputOf(
        agent,
        ids.get(agent.id) ?? agent.id,
        freeName(agent.name, takenNames),
        rename,
      );
      takenNames.add(input.name);
      result.agents.push(await step(path, () => team.createAgent(actor, input)));
    }
    if (template.kind === "team") await importGroup(deps, actor, template, ids, rename, result);
    return result;
  } catch (err) {
    await undo(deps, actor, result);
    throw err;
  }
}

async function importGroup(
  deps: ImportDeps,
  actor: Actor,
  template: TeamTemplate,
  ids: Map<string, string>,
  rename: (text: string) => string,
  result: ImportResult,
): Promise<void> {
  const { team } = deps;
  const { group } = template;
  const idOf = (slug: string) => ids.get(slug) ?? slug;
  const names = new Set((await team.listChannels(actor)).map((c) => c.name));
  const agentIds = (group.agents ?? template.agents.map((a) => a.id)).map(idOf);
  let channel = await step("group", () =>
    team.createChannel(actor, {
      kind: "group",
      name: freeName(group.name, names),
      agentIds,
      userIds: [],
      ...(group.leader !== undefined ? { leaderAgentId: idOf(group.leader) } : {}),
    }),
  );
  result.channel = channel;
  if (group.chain.length > 0) {
    const steps = group.chain.map((s) => ({
      agentId: idOf(s.agent),
      requiresApproval: s.requiresApproval,
      ...(s.instruction !== undefined ? { instruction: rename(s.instruction) } : {}),
    }));
    channel = await step("group.chain", () => team.setChain(actor, channel.id, steps));
  }
  if (group.queueMode !== undefined) {
    const queueMode = group.queueMode;
    channel = await step("group.queueMode", () => team.updateChannel(actor, channel.id, { queueMode }));
  }
  result.channel = channel;
  const { schedules } = deps;
  for (const [index, schedule] of template.schedules.entries()) {
    if (!schedules) {
      result.notes.push(`This server runs no scheduler: the schedule "${schedule.name}" was not created.`);
      continue;
    }
    const input = scheduleInputOf(schedule, channel.id, idOf, rename);
    const created = await step(`schedules.${index}`, () => schedules.create(actor, input));
    result.schedules.push(created.id);
  }
}

/** Runs one creation; a refusal becomes a 400 naming the template's field, other errors pass. */
async function step<T>(path: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    const error = toDimsumError(err);
    if (error.code !== "invalid" && error.code !== "conflict") throw err;
    const message = error.hint ? `${error.message} (${error.hint})` : error.message;
    throw new DimsumError("invalid", `The template's ${path} cannot be created: ${error.message}`, {
      issues: error.issues?.map((i) => ({ path: `${path}.${i.path}`, message: i.message })) ?? [
        { path, message },
      ],
      ...(error.hint ? { hint: error.hint } : {}),
    });
  }
}

/** Deletes what a failed import created, newest first; failures here leave the first error standing. */
async function undo(deps: ImportDeps, actor: Actor, result: ImportResult): Promise<void> {
  for (const id of result.schedules) await deps.schedules?.remove(actor, id).catch(() => undefined);
  if (result.channel) await deps.team.deleteChannel(actor, result.channel.id).catch(() => undefined);
  for (const agent of [...result.agents].reverse()) {
    await deps.team.deleteAgent(actor, agent.id).catch(() => undefined);
  }
}

function agentInputOf(
  agent: AgentTemplate,
  id: string,
  name: string,
  rename: (text: string) => string,
): AgentInput {
  return withPresent<AgentInput>(
    { id, name },
    {
      emoji: agent.emoji,
      soul: agent.persona.trim() !== "" ? rename(agent.persona) : undefined,
      model: agent.model,
      reasoning: agent.reasoning,
      toolsAllow: agent.toolsAllow,
      toolsDeny: agent.toolsDeny,
      memory: agent.memory,
      skills: agent.skills,
      knowledgeBases: agent.knowledgeBases,
      askFirst: agent.askFirst,
      answerFormat: agent.answerFormat,
    },
  );
}

function scheduleInputOf(
  schedule: ScheduleTemplate,
  channelId: string,
  idOf: (slug: string) => string,
  rename: (text: string) => string,
): Parameters<TemplateSchedules["create"]>[1] {
  return {
    name: schedule.name,
    ...(schedule.enabled !== undefined ? { enabled: schedule.enabled } : {}),
    ...(schedule.missedPolicy !== undefined ? { missedPolicy: schedule.missedPolicy } : {}),
    timing: schedule.timing,
    target:
      schedule.target.type === "chain"
        ? { type: "chain", channelId, input: rename(schedule.target.input) }
        : {
            type: "agent",
            channelId,
            agentId: idOf(schedule.target.agent),
            prompt: rename(schedule.target.prompt),
          },
  };
}

/** Template id → an id free here: the same, or with `-2`, `-3`… (kept within 40 characters). */
export function freeIds(wanted: readonly string[], taken: ReadonlySet<string>): Map<string, string> {
  const used = new Set(taken);
  const out = new Map<string, string>();
  for (const id of wanted) {
    let next = id;
    for (let n = 2; used.has(next); n++) next = `${id.slice(0, 40 - `-${n}`.length)}-${n}`;
    used.add(next);
    out.set(id, next);
  }
  return out;
}

/** The name, or `name (2)`, `name (3)`… when taken (kept within 80 characters, an agent's limit). */
function freeName(name: string, taken: ReadonlySet<string>): string {
  let next = name;
  for (let n = 2; taken.has(next); n++) next = `${name.slice(0, 80 - ` (${n})`.length)} (${n})`;
  return next;
}

/** Rewrites `@old` mentions of renamed agents to `@new`, leaving longer ids (`@old-x`) alone. */
function mentionRewriter(ids: Map<string, string>): (text: string) => string {
  const renamed = [...ids].filter(([from, to]) => from !== to);
  if (renamed.length === 0) return (text) => text;
  const to = new Map(renamed);
  const pattern = new RegExp(
    `(^|[^A-Za-z0-9_@-])@(${renamed.map(([from]) => from.replace(/[-]/g, "\\-")).join("|")})(?![A-Za-z0-9_-])`,
    "g",
  );
  return (text) => text.replace(pattern, (_m, before: string, id: string) => `${before}@${to.get(id) ?? id}`);
}
