/**
 * The team tables' rows and their mapping to records. SQLite and PostgreSQL use the same column
 * names, so both backends read and write rows through these functions.
 */

import { isReasoningEffort } from "../../llm/reasoning.js";
import type { JsonSchema, Usage } from "../../llm/types.js";
import { type VisibilityRow, visibilityParams, visibleOf } from "../../shared/visibility.js";
import { withPresent } from "../../store/present-fields.js";
import { networkFromJson } from "../agent-network.js";
import type {
  AgentRecord,
  ChainStep,
  ChannelMessage,
  ChannelRecord,
  FlowRecord,
  FlowStatus,
  FlowStep,
  MessagePart,
  QueueMode,
  RunStatus,
  TeamRun,
} from "../types.js";
import type { ApprovalGrant, ChannelPrefs, PendingAppCall, StoredRun } from "./repositories.js";

/** Parses a JSON column written by these repositories; a damaged value falls back. */
export function parseJson<T>(text: string | null | undefined, fallback: T): T {
  if (text === null || text === undefined) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

export interface AgentRow extends VisibilityRow {
  id: string;
  name: string;
  emoji: string;
  model: string | null;
  tools_allow_json: string | null;
  tools_deny_json: string;
  memory: number;
  skills_json: string;
  knowledge_bases_json: string | null;
  ask_first_json: string;
  answer_format_json: string | null;
  /** Added by migration 15 (SQLite) / 10 (PostgreSQL); NULL: the model's default. */
  reasoning?: string | null;
  /** Added by migration 24 (SQLite) / 19 (PostgreSQL); NULL: the server's sandbox network. */
  network_json?: string | null;
  created_at: number;
  updated_at: number;
}

export function toAgent(row: AgentRow): AgentRecord {
  const agent: AgentRecord = {
    id: row.id,
    name: row.name,
    emoji: row.emoji,
    toolsDeny: parseJson<string[]>(row.tools_deny_json, []),
    memory: row.memory === 1,
    skills: parseJson<string[]>(row.skills_json, []),
    askFirst: parseJson<string[]>(row.ask_first_json, []),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  Object.assign(agent, visibleOf(row));
  withPresent(agent, { model: row.model });
  if (isReasoningEffort(row.reasoning)) agent.reasoning = row.reasoning;
  const network = networkFromJson(row.network_json);
  if (network) agent.network = network;
  if (row.tools_allow_json !== null) agent.toolsAllow = parseJson<string[]>(row.tools_allow_json, []);
  if (row.knowledge_bases_json !== null) {
    agent.knowledgeBases = parseJson<string[]>(row.knowledge_bases_json, []);
  }
  if (row.answer_format_json !== null) {
    const format = parseJson<JsonSchema | null>(row.answer_format_json, null);
    if (format !== null) agent.answerFormat = format;
  }
  return agent;
}

/** name, emoji, model, allow, deny, memory, skills, knowledge bases, ask first, answer format, updated_at, id. */
export function agentParams(agent: AgentRecord): unknown[] {
  return [
    agent.name,
    agent.emoji,
    agent.model ?? null,
    agent.toolsAllow === undefined ? null : JSON.stringify(agent.toolsAllow),
    JSON.stringify(agent.toolsDeny),
    agent.memory ? 1 : 0,
    JSON.stringify(agent.skills),
    agent.knowledgeBases === undefined ? null : JSON.stringify(agent.knowledgeBases),
    JSON.stringify(agent.askFirst ?? []),
    agent.answerFormat === undefined ? null : JSON.stringify(agent.answerFormat),
    agent.updatedAt,
    agent.id,
  ];
}

/**
 * `agentParams` with the reasoning and visibility columns before the id: the parameters of an agent
 * UPDATE (the owner stays who made it).
 */
export function agentUpdateParams(agent: AgentRecord): unknown[] {
  const params = agentParams(agent);
  const [, visibility, allowed] = visibilityParams(agent);
  return [...params.slice(0, -1), agent.reasoning ?? null, visibility, allowed, params.at(-1)];
}

/** The owner, visibility and allowed people of an agent: the last three columns of its INSERT. */
export function agentVisibilityParams(agent: AgentRecord): unknown[] {
  return visibilityParams(agent);
}

export interface ChannelRow {
  id: string;
  kind: "direct" | "group";
  name: string;
  leader_agent_id: string | null;
  chain_json: string;
  queue_mode: string | null;
  created_by: string;
  created_at: number;
  updated_at: number;
}

export interface MemberRow {
  channel_id: string;
  member_type: "user" | "agent";
  member_id: string;
}

export function toChannel(row: ChannelRow, members: readonly MemberRow[]): ChannelRecord {
  const channel: ChannelRecord = {
    id: row.id,
    kind: row.kind,
    name: row.name,
    members: members.map((m) => ({ type: m.member_type, id: m.member_id })),
    chain: parseJson<ChainStep[]>(row.chain_json, []),
    createdBy: row.created_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  if (row.leader_agent_id !== null) channel.leaderAgentId = row.leader_agent_id;
  const queueMode = toQueueMode(row.queue_mode);
  if (queueMode !== undefined) channel.queueMode = queueMode;
  return channel;
}

const QUEUE_MODES: readonly string[] = ["steer", "followup", "collect", "interrupt"] satisfies QueueMode[];

/** A stored queue mode; unset, or a value this version does not know, is undefined (the default). */
export function toQueueMode(value: string | null | undefined): QueueMode | undefined {
  return value !== null && value !== undefined && QUEUE_MODES.includes(value)
    ? (value as QueueMode)
    : undefined;
}

/** Members grouped by channel id, in the order given. */
export function membersByChannel(members: readonly MemberRow[]): Map<string, MemberRow[]> {
  const byChannel = new Map<string, MemberRow[]>();
  for (const member of members) {
    const list = byChannel.get(member.channel_id) ?? [];
    list.push(member);
    byChannel.set(member.channel_id, list);
  }
  return byChannel;
}

export interface MessageRow {
  id: number;
  channel_id: string;
  author_type: "user" | "agent" | "system";
  author_id: string;
  text: string;
  run_id: string | null;
  mentions_json: string;
  created_at: number;
  parts_json: string | null;
  reply_to: number | null;
  version_of: number | null;
  edited_at: number | null;
}

/** The parts of a message that has only text. */
export function textParts(text: string): MessagePart[] {
  return text === "" ? [] : [{ type: "text", text }];
}

export function toMessage(row: MessageRow): ChannelMessage {
  const message: ChannelMessage = {
    id: row.id,
    channelId: row.channel_id,
    author: { type: row.author_type, id: row.author_id },
    text: row.text,
    mentions: parseJson<string[]>(row.mentions_json, []),
    createdAt: row.created_at,
    parts: row.parts_json === null ? textParts(row.text) : parseJson<MessagePart[]>(row.parts_json, []),
  };
  return withPresent(message, {
    runId: row.run_id,
    replyTo: row.reply_to,
    versionOf: row.version_of,
    editedAt: row.edited_at,
  });
}

export interface RunRow {
  id: string;
  channel_id: string;
  agent_id: string;
  trigger_message_id: number;
  status: RunStatus;
  flow_id: string | null;
  step_index: number | null;
  depth: number;
  parent_run_id: string | null;
  requested_by: string;
  session_user_id: string;
  session_id: string;
  error: string | null;
  usage_json: string | null;
  started_at: number;
  ended_at: number | null;
}

export function toStoredRun(row: RunRow): StoredRun {
  const run: TeamRun = {
    id: row.id,
    channelId: row.channel_id,
    agentId: row.agent_id,
    triggerMessageId: row.trigger_message_id,
    status: row.status,
    depth: row.depth,
    startedAt: row.started_at,
  };
  withPresent(run, {
    flowId: row.flow_id,
    stepIndex: row.step_index,
    parentRunId: row.parent_run_id,
    error: row.error,
  });
  // usage_json keeps the answer's model and cost beside the token counts.
  const stored = parseJson<(Usage & { model?: string; costUsd?: number }) | undefined>(
    row.usage_json,
    undefined,
  );
  if (stored) {
    const { model, costUsd, ...usage } = stored;
    if (typeof usage.inputTokens === "number") run.usage = usage;
    if (model !== undefined) run.model = model;
    if (costUsd !== undefined) run.costUsd = costUsd;
  }
  if (row.ended_at !== null) run.endedAt = row.ended_at;
  return {
    run,
    ref: { userId: row.session_user_id, sessionId: row.session_id },
    requestedBy: row.requested_by,
  };
}

/** id, channel, agent, trigger, status, flow, step, depth, parent, requested_by, session user, session, started_at. */
export function runInsertParams(stored: StoredRun): unknown[] {
  const { run, ref } = stored;
  return [
    run.id,
    run.channelId,
    run.agentId,
    run.triggerMessageId,
    run.status,
    run.flowId ?? null,
    run.stepIndex ?? null,
    run.depth,
    run.parentRunId ?? null,
    stored.requestedBy,
    ref.userId,
    ref.sessionId,
    run.startedAt,
  ];
}

/** status, error, usage, started_at, ended_at, id. */
export function runUpdateParams(run: TeamRun): unknown[] {
  return [
    run.status,
    run.error ?? null,
    // A run stopped before any usage came still keeps its model.
    run.usage || run.model !== undefined
      ? JSON.stringify({
          ...run.usage,
          ...(run.model !== undefined ? { model: run.model } : {}),
          ...(run.costUsd !== undefined ? { costUsd: run.costUsd } : {}),
        })
      : null,
    run.startedAt,
    run.endedAt ?? null,
    run.id,
  ];
}

export interface FlowRow {
  id: string;
  channel_id: string;
  trigger_message_id: number;
  status: FlowStatus;
  current_step: number;
  steps_json: string;
  created_at: number;
  updated_at: number;
}

export function toFlow(row: FlowRow): FlowRecord {
  return {
    id: row.id,
    channelId: row.channel_id,
    triggerMessageId: row.trigger_message_id,
    status: row.status,
    currentStep: row.current_step,
    steps: parseJson<FlowStep[]>(row.steps_json, []),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** id, channel, trigger, status, current step, steps, created_at, updated_at. */
export function flowParams(flow: FlowRecord): unknown[] {
  return [
    flow.id,
    flow.channelId,
    flow.triggerMessageId,
    flow.status,
    flow.currentStep,
    JSON.stringify(flow.steps),
    flow.createdAt,
    flow.updatedAt,
  ];
}

export interface GrantRow {
  channel_id: string;
  agent_id: string;
  tool: string;
  granted_by: string;
  granted_at: number;
}

export function toGrant(row: GrantRow): ApprovalGrant {
  return {
    channelId: row.channel_id,
    agentId: row.agent_id,
    tool: row.tool,
    grantedBy: row.granted_by,
    grantedAt: row.granted_at,
  };
}

/** A row of `team_channel_prefs` (BIGINT columns may come back as strings from PostgreSQL). */
export interface PrefsRow {
  channel_id: string;
  pinned_at: number | string | null;
  archived_at: number | string | null;
}

/** One person's chat preferences by channel id. */
export function prefsByChannel(rows: PrefsRow[]): Map<string, ChannelPrefs> {
  const out = new Map<string, ChannelPrefs>();
  for (const row of rows) {
    const prefs: ChannelPrefs = {};
    if (row.pinned_at !== null) prefs.pinnedAt = Number(row.pinned_at);
    if (row.archived_at !== null) prefs.archivedAt = Number(row.archived_at);
    out.set(row.channel_id, prefs);
  }
  return out;
}

export interface AppCallRow {
  id: string;
  actor: string;
  channel_id: string;
  run_id: string;
  call_id: string;
  tool: string;
  name: string;
  args: string;
  expires_at: number | string;
}

export function toAppCall(row: AppCallRow): PendingAppCall {
  return {
    actor: row.actor,
    channelId: row.channel_id,
    runId: row.run_id,
    callId: row.call_id,
    tool: row.tool,
    name: row.name,
    args: JSON.parse(row.args) as Record<string, unknown>,
    expiresAt: Number(row.expires_at),
  };
}
