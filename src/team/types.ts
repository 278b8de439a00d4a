/**
 * The team domain as the server sees it: agents with personas, channels (direct chats and groups),
 * channel messages, agent runs, and collaboration flows. `Team` is the one facade the HTTP/WebSocket
 * edge talks to; it knows nothing about HTTP.
 */

import type { PendingApproval } from "../agent/approvals.js";
import type { AgentEvent } from "../agent/events.js";
import type { AttachmentLimits } from "../attachments/file-rules.js";
import type { CatalogueEntry } from "../capabilities/index.js";
import type { QueueMode } from "../config/queue-mode.js";
import type { JsonSchema, ReasoningEffort, Usage, UserContentPart } from "../llm/types.js";
import type { McpAppResource } from "../mcp/app-meta.js";
import type { RequestedSchema } from "../mcp/elicitation-form.js";
import type { Visibility } from "../shared/visibility.js";
import type { NetworkPolicy } from "../tools/builtin/sandbox/types.js";
import type { ToolAppLink } from "../tools/types.js";
import type { McpAppCallOutcome, McpAppRef } from "./mcp-apps.js";
import type { MeetingAction, MeetingInput, MeetingMinutes, MeetingRecord } from "./meeting-types.js";
import type { RunQueueStats } from "./run-admission.js";
import type { SpendReport } from "./spend.js";

export interface AgentRecord {
  /** Slug: `^[a-z0-9][a-z0-9_-]{0,39}$`, used in @mentions and as the OpenAI-compatible model name. */
  id: string;
  name: string;
  emoji: string;
  /** `provider:model`, a fallback chain `a:x,b:y` tried in order, or undefined for the server's default model. */
  model?: string;
  /** How hard the agent's model thinks (each protocol's own control); undefined: the model's default. */
  reasoning?: ReasoningEffort;
  /** Tool names the agent may use; undefined means all built-ins (minus `toolsDeny`). */
  toolsAllow?: string[];
  toolsDeny: string[];
  memory: boolean;
  skills: string[];
  /** Knowledge bases `rag_query` may search; undefined means every base the person it answers may read. */
  knowledgeBases?: string[];
  /**
   * Tools whose every call waits for a person's approval: exact names, or `<prefix>*` patterns
   * (`github_*` for an MCP server's tools). Empty: only tools that ask on their own (the shell).
   */
  askFirst: string[];
  /** A JSON Schema every answer of the agent follows (tools may be used first); none: free text. */
  answerFormat?: JsonSchema;
  /** The sandbox network of its commands and processes; absent: the server's setting. */
  network?: NetworkPolicy;
  createdAt: number;
  updatedAt: number;
  /** Who made it (an account id); undefined: made before owners existed, seen by everyone. */
  ownerId?: string;
  /** Who sees and uses it (src/shared/visibility.ts); undefined: everyone. */
  visibility?: Visibility;
  /** The people who see it besides its owner, when `visibility` is `people`. */
  allowedUsers?: string[];
  /** Whether its SOUL.md is usable; filled by `listAgents`/`getAgent` (added for the agent list UI). */
  soulStatus?: SoulFile["status"];
  /**
   * What the agent's model (its first, for a chain) reads besides text, when the catalogue or the
   * config says; filled by the team's agent calls so clients can warn before sending an image.
   */
  modelInput?: { model: string; images: boolean; pdf: boolean };
}

export interface AgentInput {
  id: string;
  name: string;
  emoji?: string;
  /** One model, or a fallback chain (an array, or a comma list). */
  model?: string | string[];
  reasoning?: ReasoningEffort;
  toolsAllow?: string[];
  toolsDeny?: string[];
  memory?: boolean;
  skills?: string[];
  knowledgeBases?: string[];
  askFirst?: string[];
  answerFormat?: JsonSchema;
  /** The sandbox network (admins only for `allow` and `on`). */
  network?: NetworkPolicy;
  /** Who sees and uses it (default everyone); its creator owns it. */
  visibility?: Visibility;
  /** The people who see it besides its owner (visibility `people`). */
  allowedUsers?: string[];
  /** Initial SOUL.md content. */
  soul?: string;
}

export type AgentPatch = Partial<
  Omit<AgentInput, "id" | "soul" | "toolsAllow" | "knowledgeBases" | "answerFormat" | "reasoning" | "network">
> & {
  /** `null` goes back to the server's sandbox network. */
  network?: NetworkPolicy | null;
  /** `null` removes the answer format (free text). */
  answerFormat?: JsonSchema | null;
  /** `null` goes back to the model's default. */
  reasoning?: ReasoningEffort | null;
  /** `null` resets to every tool. */
  toolsAllow?: string[] | null;
  /** `null` resets to every base the person may read. */
  knowledgeBases?: string[] | null;
};

/** The persona file and whether it is usable; an empty or missing file is reported, not hidden. */
export interface SoulFile {
  agentId: string;
  content: string;
  status: "ok" | "empty" | "missing";
}

export type ChannelKind = "direct" | "group";

export interface ChannelMember {
  type: "user" | "agent";
  id: string;
}

export interface ChainStep {
  agentId: string;
  /** Pause for a person before this step's output is passed on. */
  requiresApproval: boolean;
  /** Extra instruction for this step, prepended to its input. */
  instruction?: string;
}

export type { QueueMode };

export interface ChannelRecord {
  id: string;
  kind: ChannelKind;
  name: string;
  /** Unset: `steer` in direct chats, `collect` in groups (see `queueModeOf`). */
  queueMode?: QueueMode;
  /** Agent answering un-mentioned messages in a group; the agent of a direct chat. */
  leaderAgentId?: string;
  members: ChannelMember[];
  chain: ChainStep[];
  createdBy: string;
  createdAt: number;
  updatedAt: number;
}

export interface ChannelInput {
  kind: ChannelKind;
  name: string;
  leaderAgentId?: string;
  agentIds: string[];
  userIds: string[];
}

/** `waiting`: the call waits for a person's approval. */
export type ToolPartStatus = "running" | "waiting" | "ok" | "error";

/** A tool call's approval, shown on its card: asked for, then decided (or expired unanswered). */
export interface ApprovalView {
  state: "pending" | "approved" | "rejected" | "expired";
  /** What will happen (the command line for the shell). */
  summary: string;
  reason: string;
  /** The person the run acts for (who may answer; in a group, the chat's owner and admins too). */
  askedOf?: string;
  /** Their display name, for readers who cannot list accounts. */
  askedOfName?: string;
  /** Who decided. */
  by?: string;
  byName?: string;
  /** Approved for this agent in this chat from now on. */
  always?: boolean;
  /** The reason given with a rejection. */
  note?: string;
}

/**
 * One piece of a message, in the order it happened: what the chat renders, live and after a reload.
 * An agent's answer is text, reasoning and tool calls interleaved, nested runs of agents it called,
 * and at most one `error` or `stopped` part that ended it.
 */
export type MessagePart =
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string }
  | {
      type: "tool";
      callId: string;
      name: string;
      args: unknown;
      status: ToolPartStatus;
      output?: string;
      durationMs?: number;
      approval?: ApprovalView;
      /** The MCP App that shows the result (its `ui://` resource), in the web chat. */
      app?: ToolAppLink;
    }
  | {
      /** A run of an agent this one called with call_agent; `parts` is filled once it ended. */
      type: "agent_run";
      runId: string;
      agentId: string;
      status: RunStatus;
      parts?: MessagePart[];
    }
  /** A file the person attached (its bytes at `/api/channels/:channel/attachments/:id`). */
  | {
      type: "attachment";
      id: string;
      name: string;
      mimeType: string;
      kind: "image" | "pdf" | "text";
      size: number;
    }
  | { type: "error"; code: string; message: string; hint?: string }
  | { type: "stopped"; reason: string }
  /** The answer went on from its checkpoint after the server (or its instance) stopped. */
  | { type: "resumed"; reason: "restart" }
  /** A person edited this answer (a flow step's output): who, by id and by name at the time. */
  | { type: "edited"; by: string; name: string }
  /** A schedule posted this message in its creator's name (chats show it as the schedule's, not "You"). */
  | { type: "scheduled"; scheduleId: string; name: string }
  /**
   * Posted from a messenger chat (a connector's `platform`: telegram, feishu, dingtalk, wecom, …) by
   * `name` as the platform knows them: the web UI labels the message with both.
   */
  | { type: "messenger"; platform: string; name: string }
  /** The model call moved to the next model of the agent's chain (`to` answered, unless it moved again). */
  | { type: "model_fallback"; from: string; to: string; reason: string; skipped?: boolean }
  /** A meeting's minutes, shown as a card (the message's text is their Markdown). */
  | { type: "minutes"; meetingId: string; topic: string; minutes: MeetingMinutes; note?: string };

/** A channel as one person's list shows it: unread count, and when they pinned or archived it. */
export type ChannelListing = ChannelRecord & { unread: number; pinnedAt?: number; archivedAt?: number };

/** A file attached in a chat, as clients see it. */
export interface AttachmentView {
  id: string;
  name: string;
  mimeType: string;
  kind: "image" | "pdf" | "text";
  size: number;
}

export interface ChannelMessage {
  /** Monotonic per server; clients resume from the last id they saw. */
  id: number;
  channelId: string;
  author: { type: "user" | "agent" | "system"; id: string };
  /** The plain text (what search, connectors and other agents read). */
  text: string;
  /** What the chat renders, in order; a message stored before parts existed has one text part. */
  parts: MessagePart[];
  /** The run that produced an agent message. */
  runId?: string;
  /** The message an agent answer replies to (it is shown right after it). */
  replyTo?: number;
  /** A regenerated answer: the id of the first version it replaces. */
  versionOf?: number;
  /** Set when the author edited the text. */
  editedAt?: number;
  /** Agents this message was routed to. */
  mentions: string[];
  createdAt: number;
}

/** `waiting`: the run waits for a person to decide on tool calls; it holds no model call and no slot. */
export type RunStatus = "queued" | "running" | "waiting" | "done" | "error" | "cancelled";

export interface TeamRun {
  id: string;
  channelId: string;
  agentId: string;
  /** The message that triggered the run. */
  triggerMessageId: number;
  status: RunStatus;
  /** Set for runs that are steps of a collaboration flow. */
  flowId?: string;
  stepIndex?: number;
  /** Depth in call_agent nesting (0 for runs started by a message). */
  depth: number;
  /** The run whose call_agent started this one (depth >= 1). */
  parentRunId?: string;
  error?: string;
  usage?: Usage;
  /** `provider:model` that answered (set when the run ends). */
  model?: string;
  /** What the run cost in USD at the model's prices, when they are known. */
  costUsd?: number;
  startedAt: number;
  endedAt?: number;
  /**
   * Only from `getRun` while the run is live: what its answer holds so far, up to its agent event
   * number `seq` (a page that opens mid-run starts from this and applies the later events).
   */
  live?: { parts: MessagePart[]; seq: number };
  /** Only from `getRun` while the run waits: the tool calls it waits on. */
  pendingApprovals?: PendingApproval[];
}

/** A tool an agent may run in a chat without asking again ("approve always"). */
export interface ApprovalGrant {
  channelId: string;
  agentId: string;
  tool: string;
  grantedBy: string;
  grantedAt: number;
}

export type FlowStatus = "idle" | "running" | "paused" | "done" | "error" | "stopped";
export type StepStatus = "waiting" | "running" | "completed" | "error" | "skipped";

export interface FlowStep extends ChainStep {
  status: StepStatus;
  input?: string;
  output?: string;
  error?: string;
  runId?: string;
}

/** A collaboration chain being executed: a state machine persisted across restarts. */
export interface FlowRecord {
  id: string;
  channelId: string;
  triggerMessageId: number;
  status: FlowStatus;
  /** Index of the step running, paused on, or failed at. */
  currentStep: number;
  steps: FlowStep[];
  createdAt: number;
  updatedAt: number;
}

export type FlowAction =
  | { action: "pause" }
  | { action: "resume" }
  | { action: "stop" }
  | { action: "skip"; stepIndex: number }
  | { action: "retry"; stepIndex: number }
  | { action: "edit"; stepIndex: number; output: string }
  /** Approve a step that requires approval (same as resume when paused on it). */
  | { action: "approve"; stepIndex: number };

/** Everything the edge forwards to clients, in order per run. */
export type TeamEvent =
  | { type: "message"; channelId: string; message: ChannelMessage }
  | { type: "message_deleted"; channelId: string; messageId: number }
  | { type: "run"; channelId: string; run: TeamRun }
  /**
   * An event of a run's agent, as the agent emitted it (text and reasoning deltas of one tick merged;
   * the `messages` units are not forwarded: they repeat what the deltas and tool events said), with
   * its number in the run (1, 2, …).
   */
  | { type: "agent"; channelId: string; runId: string; seq: number; event: AgentEvent }
  /** A tool call of a waiting run was decided (or expired); asking shows as the agent's `approval` event. */
  | {
      type: "approval";
      channelId: string;
      runId: string;
      callId: string;
      tool: string;
      state: "approved" | "rejected" | "expired";
      by?: string;
      always?: boolean;
      note?: string;
    }
  | { type: "flow"; channelId: string; flow: FlowRecord }
  /** A meeting started, moved to its next turn, or ended. */
  | { type: "meeting"; channelId: string; meeting: MeetingRecord }
  | { type: "channel"; channelId: string; channel: ChannelRecord }
  /**
   * A budget passed its soft limit (once per budget and period): told to the person it limits and to
   * owners and admins, in the web UI and in their linked messengers. `channelId` is `budget:<id>`.
   */
  | { type: "budget_notice"; channelId: string; notice: BudgetNotice }
  /**
   * An MCP server asks the person a run acts for (`userId`, the only one it is sent to) for input,
   * or for approval to use the agent's model (sampling).
   */
  | { type: "elicitation"; channelId: string; runId: string; userId: string; request: ElicitationView }
  /** The request was answered, declined, cancelled or timed out. */
  | {
      type: "elicitation_closed";
      channelId: string;
      runId: string;
      userId: string;
      id: string;
      action: "accept" | "decline" | "cancel";
    };

/** What a budget notice says (the web UI and the messengers word it). */
export interface BudgetNotice {
  budgetId: string;
  scope: "person" | "agent" | "group";
  scopeId: string;
  period: "day" | "month";
  unit: "usd" | "tokens";
  softLimit: number;
  hardLimit: number | null;
  spent: number;
  /** The model (or chain) the next answers use, when the budget names one. */
  cheaperModel: string | null;
  at: number;
}

/** A request for input as the web chat shows it (an MCP elicitation, form or URL mode). */
export interface ElicitationView {
  id: string;
  channelId: string;
  /** The run that asked (answers go to `/api/runs/:runId/elicitations/:id`). */
  runId: string;
  /** The run whose answer shows the request, when not `runId` (a call_agent's nested run: the outermost). */
  shownIn?: string;
  userId: string;
  /** The MCP server asking. */
  server: string;
  message: string;
  /** `sampling`: the server asks to use the agent's model; the person approves or declines. */
  mode: "form" | "url" | "sampling";
  /** Form mode: the flat JSON schema of the fields. */
  requestedSchema?: RequestedSchema;
  /** URL mode: the page to open. */
  url?: string;
  /** Sampling mode: what the server wants the model to answer. */
  sampling?: SamplingView;
  /** When the request is cancelled unanswered (ms since the epoch). */
  expiresAt: number;
}

/** An MCP server's sampling request as the person sees it before approving it. */
export interface SamplingView {
  /** The conversation the server wants answered (images and audio as placeholders). */
  messages: Array<{ role: "user" | "assistant"; text: string }>;
  systemPrompt?: string;
  maxTokens: number;
  /** The model that would answer: the agent's own. */
  model: string;
}

/** The person's answer to a request for input. */
export interface ElicitationAnswer {
  action: "accept" | "decline" | "cancel";
  content?: Record<string, string | number | boolean | string[]>;
}

export type { MeetingAction, MeetingInput, MeetingRecord } from "./meeting-types.js";

/** Who is asking; the facade enforces what they may see and do. */
export interface Actor {
  userId: string;
  role: "owner" | "admin" | "member" | "guest";
}

export interface PostResult {
  message: ChannelMessage;
  /** Runs started for the mentioned (or leader) agents. */
  runs: TeamRun[];
  /**
   * Agents that started no run for the message: it went to their answer in progress (`steer`), waits
   * for the rest of a burst (`collect`), or for their run that waits for approval (`waiting`).
   */
  queued?: Array<{ agentId: string; mode: "steer" | "collect" | "waiting" }>;
  /** Set when the message started a collaboration flow. */
  flow?: FlowRecord;
}

/**
 * The team facade. Every method that touches a channel checks that the actor may: owners and admins
 * see everything; members and guests only channels they belong to; guests cannot create or manage.
 * Denials throw DimsumError with a refusal code (`invalid`, `forbidden`, `not_found`, `conflict`).
 */
export interface Team {
  /** Every tool an agent can be given (built-ins, memory, knowledge, MCP, HTTP, plugins, team). */
  listTools(actor: Actor): Promise<CatalogueEntry[]>;
  listAgents(actor: Actor): Promise<AgentRecord[]>;
  getAgent(actor: Actor, id: string): Promise<AgentRecord>;
  /** The attachment limits per file kind and per message (`attachments` in the config file). */
  attachmentLimits(): AttachmentLimits;
  createAgent(actor: Actor, input: AgentInput): Promise<AgentRecord>;
  updateAgent(actor: Actor, id: string, patch: AgentPatch): Promise<AgentRecord>;
  deleteAgent(actor: Actor, id: string): Promise<void>;
  getSoul(actor: Actor, id: string): Promise<SoulFile>;
  putSoul(actor: Actor, id: string, content: string): Promise<SoulFile>;

  listChannels(actor: Actor): Promise<ChannelListing[]>;
  /** Pins or archives a chat for the actor alone; returns when they did (unset: they did not). */
  setChannelPrefs(
    actor: Actor,
    channelId: string,
    patch: { pinned?: boolean; archived?: boolean },
  ): Promise<{ pinnedAt?: number; archivedAt?: number }>;
  /**
   * Names a direct chat after its first exchange: one short call to its agent's model, or the first
   * words of the question when no model answers. Returns the renamed chat.
   */
  titleChannel(actor: Actor, channelId: string): Promise<ChannelRecord>;
  getChannel(actor: Actor, id: string): Promise<ChannelRecord>;
  createChannel(actor: Actor, input: ChannelInput): Promise<ChannelRecord>;
  updateChannel(
    actor: Actor,
    id: string,
    patch: { name?: string; leaderAgentId?: string | null; queueMode?: QueueMode },
  ): Promise<ChannelRecord>;
  deleteChannel(actor: Actor, id: string): Promise<void>;
  addMember(actor: Actor, channelId: string, member: ChannelMember): Promise<ChannelRecord>;
  removeMember(actor: Actor, channelId: string, member: ChannelMember): Promise<ChannelRecord>;
  setChain(actor: Actor, channelId: string, steps: ChainStep[]): Promise<ChannelRecord>;

  /** Messages before `before` (exclusive), newest last, at most `limit`. */
  listMessages(
    actor: Actor,
    channelId: string,
    options?: { before?: number; after?: number; limit?: number },
  ): Promise<ChannelMessage[]>;
  /** Marks the channel read up to a message id for this user (unread counts). */
  markRead(actor: Actor, channelId: string, messageId: number): Promise<void>;
  /**
   * Stores the message and routes it: `@agent` to that agent, `@all` to every agent in the channel,
   * no mention to the leader; a group with a chain and `/flow` (or `@chain`) starts a flow.
   */
  /**
   * `present`: the person is at the chat (web UI), so MCP requests for input are put to them.
   * `mode`: what the message does while an agent works, instead of the chat's queue mode (a
   * schedule's prompt is answered by a run of its own: `followup`).
   */
  postMessage(
    actor: Actor,
    channelId: string,
    text: string,
    options?: {
      present?: boolean;
      mode?: QueueMode;
      scheduled?: { scheduleId: string; name: string };
      /** The messenger chat the message came from, and its sender's name there. */
      messenger?: { platform: string; name: string };
      /** Files uploaded to the chat before (their ids), sent with the text. */
      attachments?: string[];
    },
  ): Promise<PostResult>;
  /** Stores a file in the chat (once per content), checked against the kinds and limits. */
  uploadAttachment(actor: Actor, channelId: string, name: string, data: Buffer): Promise<AttachmentView>;
  /** A file of the chat and its bytes; not found for anyone who may not read the chat. */
  readAttachment(
    actor: Actor,
    channelId: string,
    id: string,
  ): Promise<{ meta: AttachmentView; data: Buffer }>;
  /** The MCP App a tool call of an answer renders: its HTML and declared CSP; not found for anyone who may not read the chat. */
  mcpAppResource(actor: Actor, ref: McpAppRef): Promise<McpAppResource>;
  /** An MCP App's `tools/call`, through the agent's tools, rules and approvals. */
  mcpAppCall(
    actor: Actor,
    ref: McpAppRef,
    name: string,
    args: Record<string, unknown>,
  ): Promise<McpAppCallOutcome>;
  /** The person's answer to an MCP App's call that waits for approval. */
  mcpAppDecide(
    actor: Actor,
    ref: McpAppRef,
    approvalId: string,
    decision: { decision: "approve" | "reject"; always?: boolean },
  ): Promise<McpAppCallOutcome>;
  deleteMessage(actor: Actor, messageId: number): Promise<void>;
  /**
   * A new answer to the message an agent answer replied to; the old answer stays as an earlier
   * version (`versionOf`). Anyone who may post in the channel may ask.
   */
  regenerate(actor: Actor, messageId: number): Promise<PostResult>;
  /**
   * Changes the text of the actor's own last message in the channel and answers it again (earlier
   * answers stay as earlier versions).
   */
  editMessage(actor: Actor, messageId: number, text: string): Promise<PostResult>;
  searchMessages(
    actor: Actor,
    query: string,
    options?: { channelId?: string; limit?: number },
  ): Promise<ChannelMessage[]>;

  getRun(actor: Actor, runId: string): Promise<TeamRun>;
  /** The channel's ended runs that used tokens, oldest first: each answer's model, tokens, cost and time. */
  listChannelRuns(actor: Actor, channelId: string): Promise<TeamRun[]>;
  /** Spend per day and provider and per day and agent over `days` days: every run for admins, else the caller's. */
  spend(actor: Actor, options: { days: number }): Promise<SpendReport>;
  cancelRun(actor: Actor, runId: string): Promise<TeamRun>;
  /**
   * Owners and admins: the chat answers live on this instance, those waiting to start, their wait,
   * and what holds them (the event loop's delay, the heap, or the backstop of live answers).
   */
  runQueue(actor: Actor): RunQueueStats;
  /** The stored trace events of a run's agent turn. */
  getRunTrace(actor: Actor, runId: string): Promise<unknown[]>;

  getFlow(actor: Actor, flowId: string): Promise<FlowRecord>;

  /**
   * Starts a meeting in a group (also `/meeting <topic>` in a message): the person's message opens
   * it, then the participants speak round by round and the moderator writes the minutes.
   */
  startMeeting(actor: Actor, channelId: string, input: MeetingInput): Promise<MeetingRecord>;
  getMeeting(actor: Actor, meetingId: string): Promise<MeetingRecord>;
  /** A group's meetings, newest first (the Decisions list); `query` finds words of topics and minutes. */
  listMeetings(actor: Actor, channelId: string, options?: { query?: string }): Promise<MeetingRecord[]>;
  /** Ends a meeting early (with minutes), adds a round, or stops it. */
  meetingAction(actor: Actor, meetingId: string, action: MeetingAction): Promise<MeetingRecord>;
  /** The minutes as Markdown (404 before there are minutes). */
  meetingMarkdown(actor: Actor, meetingId: string): Promise<string>;
  /** Starts an action item of the minutes whose owner is an agent of the group: a task posted to it. */
  startActionItem(actor: Actor, meetingId: string, index: number): Promise<PostResult>;
  flowAction(actor: Actor, flowId: string, action: FlowAction): Promise<FlowRecord>;

  /**
   * Runs an agent directly and returns its answer (the OpenAI-compatible endpoint): the messages are
   * an OpenAI-style conversation; `onDelta` receives streamed text.
   */
  complete(
    actor: Actor,
    agentId: string,
    messages: Array<
      | { role: "system" | "assistant"; content: string }
      | { role: "user"; content: string | UserContentPart[] }
    >,
    options?: {
      signal?: AbortSignal;
      onDelta?: (text: string) => void;
      /** Hold the answer to a JSON Schema (`text` is then the validated JSON). */
      output?: { schema: JsonSchema; name?: string };
    },
  ): Promise<{ text: string; usage?: Usage; runId: string }>;

  /** Subscribes to events of the channels the actor may see; returns an unsubscribe function. */
  /**
   * `local`: only events of this instance's own work, not those other instances relayed (a consumer
   * that acts on an event, such as sending an answer out, acts once).
   */
  subscribe(actor: Actor, listener: (event: TeamEvent) => void, options?: { local?: boolean }): () => void;
  /** Decides a tool call the run waits on; the run goes on once every pending call is decided. */
  answerApproval(
    actor: Actor,
    runId: string,
    callId: string,
    answer: { decision: "approve" | "reject"; always?: boolean; reason?: string },
  ): Promise<TeamRun>;
  /** The chat's "approve always" grants. */
  listApprovalGrants(actor: Actor, channelId: string): Promise<ApprovalGrant[]>;
  /** Revokes a grant (its granter, or someone who manages the chat). */
  revokeApprovalGrant(actor: Actor, channelId: string, agentId: string, tool: string): Promise<void>;
  /** Answers a request for input put to the actor during a run (404 when it is not theirs). */
  answerElicitation(
    actor: Actor,
    runId: string,
    id: string,
    answer: ElicitationAnswer,
  ): Promise<ElicitationView>;
  /** The actor's open requests for input in a channel. */
  listElicitations(actor: Actor, channelId: string): Promise<ElicitationView[]>;
  /** Cancels running work and waits for it to settle (server shutdown). */
  close(): Promise<void>;
}
