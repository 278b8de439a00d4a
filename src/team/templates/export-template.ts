/**
 * Exports an agent, or a group with its agents, chain and the caller's schedules on it, as a template
 * file. Only what rebuilds the team goes in: personas and settings. Ids of the server (channel,
 * schedules), members who are people, owners and timestamps stay out, and so does anything secret
 * (agents hold none: provider keys and MCP secrets live in the server's settings, not on agents).
 */
import { invalid } from "../../errors.js";
import type { Actor, AgentRecord, ChannelRecord, Team } from "../types.js";
import type { TemplateSchedules } from "./template-schedules.js";
import {
  type AgentOnlyTemplate,
  type AgentTemplate,
  type ScheduleTemplate,
  TEMPLATE_FORMAT,
  TEMPLATE_VERSION,
  type TeamTemplate,
} from "./template-schema.js";

/** The template of one agent (members and up: reading a persona is the right it takes). */
export async function exportAgent(team: Team, actor: Actor, agentId: string): Promise<AgentOnlyTemplate> {
  const agent = await agentTemplateOf(team, actor, await team.getAgent(actor, agentId));
  return {
    format: TEMPLATE_FORMAT,
    version: TEMPLATE_VERSION,
    kind: "agent",
    name: agent.name,
    agent,
  };
}

/** The template of a group (anyone who can see it and read personas); a direct chat is refused. */
export async function exportTeam(
  team: Team,
  actor: Actor,
  channelId: string,
  schedules?: TemplateSchedules,
): Promise<TeamTemplate> {
  const channel = await team.getChannel(actor, channelId);
  if (channel.kind !== "group") {
    throw invalid("Only a group can be exported as a team.", "export its agent from the Agents page instead");
  }
  const agentIds = channel.members.filter((m) => m.type === "agent").map((m) => m.id);
  const agents: AgentTemplate[] = [];
  for (const id of agentIds) agents.push(await agentTemplateOf(team, actor, await team.getAgent(actor, id)));
  const template: TeamTemplate = {
    format: TEMPLATE_FORMAT,
    version: TEMPLATE_VERSION,
    kind: "team",
    name: channel.name,
    agents,
    group: groupOf(channel, agentIds),
    schedules: schedules ? await schedulesOf(schedules, actor, channel) : [],
  };
  return template;
}

async function agentTemplateOf(team: Team, actor: Actor, agent: AgentRecord): Promise<AgentTemplate> {
  const soul = await team.getSoul(actor, agent.id);
  const template: AgentTemplate = { id: agent.id, name: agent.name, persona: soul.content };
  if (agent.emoji) template.emoji = agent.emoji;
  if (agent.model !== undefined) template.model = agent.model;
  if (agent.reasoning !== undefined) template.reasoning = agent.reasoning;
  if (agent.toolsAllow !== undefined) template.toolsAllow = [...agent.toolsAllow];
  if (agent.toolsDeny.length > 0) template.toolsDeny = [...agent.toolsDeny];
  template.memory = agent.memory;
  if (agent.skills.length > 0) template.skills = [...agent.skills];
  if (agent.knowledgeBases !== undefined) template.knowledgeBases = [...agent.knowledgeBases];
  if (agent.askFirst.length > 0) template.askFirst = [...agent.askFirst];
  if (agent.answerFormat !== undefined) template.answerFormat = agent.answerFormat;
  return template;
}

function groupOf(channel: ChannelRecord, agentIds: string[]): TeamTemplate["group"] {
  const group: TeamTemplate["group"] = {
    name: channel.name,
    agents: agentIds,
    chain: channel.chain.map((s) => ({
      agent: s.agentId,
      requiresApproval: s.requiresApproval,
      ...(s.instruction ? { instruction: s.instruction } : {}),
    })),
  };
  if (channel.leaderAgentId !== undefined) group.leader = channel.leaderAgentId;
  if (channel.queueMode !== undefined) group.queueMode = channel.queueMode;
  return group;
}

/** The actor's cron and interval schedules on the group (one-off runs are not worth repeating). */
async function schedulesOf(
  schedules: TemplateSchedules,
  actor: Actor,
  channel: ChannelRecord,
): Promise<ScheduleTemplate[]> {
  const agents = new Set(channel.members.filter((m) => m.type === "agent").map((m) => m.id));
  const out: ScheduleTemplate[] = [];
  for (const s of await schedules.list(actor)) {
    if (s.ownerId !== actor.userId || s.target.channelId !== channel.id || s.timing.kind === "once") continue;
    if (s.target.type === "agent" && !agents.has(s.target.agentId)) continue;
    if (s.target.type === "chain" && channel.chain.length === 0) continue;
    out.push({
      name: s.name,
      enabled: s.enabled,
      timing: s.timing,
      target:
        s.target.type === "chain"
          ? { type: "chain", input: s.target.input }
          : { type: "agent", agent: s.target.agentId, prompt: s.target.prompt },
      missedPolicy: s.missedPolicy,
    });
  }
  return out;
}
