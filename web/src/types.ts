/**
 * The JSON shapes the UI exchanges with the server: the team domain types re-exported from the
 * server's contract, plus the auth, settings, token and MCP shapes of notes/team-api.md.
 */

import type { Visibility } from "../../src/shared/visibility.js";
import type {
  AgentPatch,
  AgentRecord,
  ChannelMessage,
  ChannelRecord,
  PostResult,
  TeamEvent,
} from "../../src/team/types.js";

export type { CatalogueEntry, ToolSource } from "../../src/capabilities/assembly.js";
export type { McpPromptInfo } from "../../src/mcp/server-pool.js";
export type { CoreBlock, MemoryRecord, MemoryType } from "../../src/memory/types.js";
export type { ModelChoice, ModelsResponse, ProviderModels } from "../../src/server/routes/models.js";
export type { McpAppCallOutcome, McpAppCallResult } from "../../src/team/mcp-apps.js";
export type {
  DecisionShape,
  MeetingAction,
  MeetingBudget,
  MeetingInput,
  MeetingMinutes,
  MeetingRecord,
} from "../../src/team/meeting-types.js";
export type { RunQueueStats as RunQueue } from "../../src/team/run-admission.js";
export type { SpendReport, SpendRow } from "../../src/team/spend.js";
export type { GalleryEntry } from "../../src/team/templates/gallery.js";
export type { ImportResult } from "../../src/team/templates/import-template.js";
export type { Template } from "../../src/team/templates/template-schema.js";
export type {
  AgentInput,
  AgentPatch,
  AgentRecord,
  ApprovalGrant,
  ApprovalView,
  AttachmentView,
  BudgetNotice,
  ChainStep,
  ChannelInput,
  ChannelKind,
  ChannelMember,
  ChannelMessage,
  ChannelRecord,
  ElicitationAnswer,
  ElicitationView,
  FlowAction,
  FlowRecord,
  FlowStatus,
  FlowStep,
  MessagePart,
  PostResult,
  QueueMode,
  RunStatus,
  SoulFile,
  StepStatus,
  TeamEvent,
  TeamRun,
} from "../../src/team/types.js";

/**
 * The PATCH body for an agent. Clearing the model or the allow list is sent as `null` (like a
 * channel's `leaderAgentId`), since an omitted key means "unchanged".
 */
export type AgentPatchBody = Omit<AgentPatch, "model" | "toolsAllow"> & {
  model?: string | null;
  toolsAllow?: string[] | null;
};

/** The answer to a tool call waiting for approval (`POST /api/runs/:runId/approvals/:callId`). */
export interface ApprovalDecisionInput {
  decision: "approve" | "reject";
  /** With `approve`: the agent may run this tool in this chat from now on without asking. */
  always?: true;
  /** With `reject`: why, for the agent to read. */
  reason?: string;
}

/**
 * An agent that got no new run for a posted message: it went to the run in progress (`steer`), is
 * being collected for one answer (`collect`), or waits for a run that waits for approval (`waiting`).
 */
export type QueuedDelivery = NonNullable<PostResult["queued"]>[number];

/** `GET /api/agents` adds the persona status to each record (notes/team-api.md). */
export type AgentWithSoul = AgentRecord & { soulStatus?: "ok" | "empty" | "missing" };

export type Role = "owner" | "admin" | "member" | "guest";

export interface SessionUser {
  id: string;
  username: string;
  role: Role;
  /** Still signed in with the one-time password the server printed: the app opens Settings → Account. */
  mustChangePassword?: boolean;
  /** The language the person chose for the web UI; null until they choose (the browser's languages then). */
  locale?: string | null;
  /** Listed in Settings → People: an admin disabled the account (it cannot sign in). */
  disabled?: boolean;
}

/** What login and first-run setup return; the session token itself lives in the HttpOnly cookie. */
export interface AuthResult {
  user: SessionUser;
  csrfToken: string;
  token?: string;
}

export interface SessionInfo {
  id: string;
  createdAt: number;
  lastSeenAt: number;
  expiresAt: number;
  userAgent?: string;
  current: boolean;
}

export interface UserInput {
  username: string;
  password: string;
  role: Role;
}

/** Where a provider's key or base URL comes from ("config": the config file). */
export type ValueSource = "settings" | "environment" | "config" | "default" | "none";

/**
 * A provider as `GET /api/settings` lists it: every built-in one, then the custom ones of the config
 * file, then those added here.
 */
export interface ProviderInfo {
  name: string;
  builtin: boolean;
  /** Defined in the config file: name and protocol read-only; a key and base URL saved here override. */
  fromConfigFile: boolean;
  protocol: string;
  baseUrl: string;
  baseUrlSource: ValueSource;
  defaultBaseUrl: string | null;
  /** e.g. `OPENAI_API_KEY`; null when the provider needs no key (Ollama). */
  keyEnv: string | null;
  needsKey: boolean;
  hasKey: boolean;
  keySource: ValueSource;
  /** Only for keys saved here; keys from the environment are never previewed. */
  keyPreview: string | null;
}

/** Whether the default model can run (`GET /api/models/status`), and the fix if not. */
export interface ModelStatus {
  ready: boolean;
  defaultModel?: string | null;
  provider?: string | null;
  problem: "no_default_model" | "no_key" | "bad_model" | null;
  message: string | null;
}

export interface Settings {
  defaultModel: string | null;
  defaultModelSource: ValueSource;
  providers: ProviderInfo[];
  modelStatus: ModelStatus;
}

export interface ProviderUpdate {
  name: string;
  /** null returns a built-in provider to its default (or environment) URL. */
  baseUrl?: string | null;
  /** null or "" removes the saved key. */
  apiKey?: string | null;
  protocol?: string;
}

export interface SettingsUpdate {
  defaultModel?: string;
  providers?: ProviderUpdate[];
}

export interface ApiTokenInfo {
  id: string;
  name: string;
  createdAt: number;
  lastUsedAt?: number | null;
  preview: string;
}

/** A freshly created API token: `token` is shown once and never again. */
export interface CreatedToken {
  id: string;
  name: string;
  token: string;
}

/** An MCP server as `GET /api/mcp` reports it; fields beyond name and status are shown when present. */
export interface McpServerInfo {
  name: string;
  status: string;
  error?: string;
  tools?: number | string[];
  transport?: string;
  /** Each member signs in with their own account (OAuth); no shared connection. */
  perPerson?: boolean;
  /** Added in Settings, so it can be removed there (mcp.json's servers are read-only). */
  removable?: boolean;
  /** Who added it; absent for mcp.json's servers (and on servers from before owners). */
  ownerId?: string;
  /** Who sees and uses it (src/shared/visibility.ts); absent: everyone. */
  visibility?: Visibility;
  allowedUsers?: string[];
}

/** Who sees a resource, as POST and PATCH take it. */
export interface VisibilityInput {
  visibility?: Visibility;
  allowedUsers?: string[];
}

/** A server to add in Settings → MCP servers: a command (stdio) or a remote URL. */
export type McpServerInput = (
  | { name: string; transport: "stdio"; command: string; args: string[]; env?: Record<string, string> }
  | { name: string; url: string; oauth?: { clientId?: string; scope?: string } }
) &
  VisibilityInput;

/** A remote A2A agent agents may call (Settings → Remote agents); never its token. */
export interface RemoteAgentInfo {
  name: string;
  url: string;
  description: string | null;
  hasToken: boolean;
  enabled: boolean;
  /** a2a.json's are read-only here; Settings' can be removed. */
  source: "a2a.json" | "settings";
  removable: boolean;
}

/** A remote agent to add in Settings → Remote agents. */
export interface RemoteAgentInput {
  name: string;
  url: string;
  token?: string;
  description?: string;
}

/** A change to a remote agent added in Settings: `null` removes the token or the description. */
export interface RemoteAgentPatch {
  url?: string;
  token?: string | null;
  description?: string | null;
  enabled?: boolean;
}

/** What "Check" found: the agent's card, or why it could not be read. */
export type RemoteAgentCheck =
  | {
      ok: true;
      card: { name: string; description: string; skills: Array<{ name: string; description: string }> };
    }
  | { ok: false; error: { message: string; hint: string | null } };

/** A channel in this person's list: unread count, and when they pinned or archived it. */
export type ChannelSummary = ChannelRecord & { unread: number; pinnedAt?: number; archivedAt?: number };

/** When this person pinned or archived a chat (unset: they did not). */
export interface ChannelPrefs {
  pinnedAt?: number;
  archivedAt?: number;
}

/** Every frame the server sends over `/ws`. */
export type ServerFrame =
  | TeamEvent
  | { type: "backlog"; channelId: string; messages: ChannelMessage[] }
  | { type: "pong" }
  /** The account's role changed: the socket (and the UI) now carry these rights. */
  | { type: "reauthorized"; user: { id: string; role: Role } }
  /** A subscription the new rights no longer cover was dropped by the server. */
  | { type: "unsubscribed"; channelId: string; message: string; code?: string }
  | { type: "error"; message: string };

/** Every frame the client sends over `/ws`. */
export type ClientFrame =
  | { type: "subscribe"; channelId: string; since?: number }
  | { type: "unsubscribe"; channelId: string }
  /** Hear of new messages and approval requests in every channel one may see (unread counts, notifications). */
  | { type: "watch" }
  | { type: "ping" };

/** One audit log entry as `/api/audit` returns it. */
export interface AuditEntry {
  seq: number;
  at: number;
  actorId: string | null;
  actorName: string | null;
  action: string;
  target: string | null;
  ip: string | null;
  userAgent: string | null;
  instance: string | null;
  before: unknown;
  after: unknown;
  hash: string;
}

/** The audit page's filters (times in ms). */
export interface AuditFilters {
  actor?: string;
  action?: string;
  from?: number;
  to?: number;
}

/** What checking the audit log's hash chain found. */
export interface AuditVerification {
  ok: boolean;
  checked: number;
  prunedThrough: number;
  problems: Array<{ seq: number; problem: string; message: string }>;
}

/** A budget as the settings page edits it. */
export interface BudgetInput {
  scope: "person" | "agent" | "group";
  scopeId: string;
  period: "day" | "month";
  unit: "usd" | "tokens";
  softLimit: number | null;
  hardLimit: number | null;
  cheaperModel: string | null;
}

/** A budget and what was spent in its current period. */
export interface BudgetStatus extends BudgetInput {
  id: string;
  periodKey: string;
  spent: number;
  remaining: number | null;
  resetsAt: number;
}
