/**
 * Typed fetch client for the Dimsum HTTP API (notes/team-api.md). Auth rides on the HttpOnly session
 * cookie; the CSRF token is kept in memory only and sent on every state-changing request.
 */

import type { AttachmentLimits } from "../../src/attachments/file-rules.js";
import { currentLocale, type MessageKey, t } from "./i18n/index.js";
import type {
  AgentInput,
  AgentPatch,
  AgentPatchBody,
  AgentRecord,
  ApiTokenInfo,
  ApprovalDecisionInput,
  ApprovalGrant,
  AuditEntry,
  AuditFilters,
  AuditVerification,
  AuthResult,
  BudgetInput,
  BudgetStatus,
  CatalogueEntry,
  ChainStep,
  ChannelInput,
  ChannelMember,
  ChannelMessage,
  ChannelPrefs,
  ChannelRecord,
  ChannelSummary,
  CoreBlock,
  CreatedToken,
  ElicitationAnswer,
  ElicitationView,
  FlowAction,
  FlowRecord,
  GalleryEntry,
  ImportResult,
  McpAppCallOutcome,
  McpPromptInfo,
  McpServerInfo,
  McpServerInput,
  MemoryRecord,
  MemoryType,
  ModelStatus,
  ModelsResponse,
  PostResult,
  ProviderUpdate,
  QueueMode,
  RemoteAgentCheck,
  RemoteAgentInfo,
  RemoteAgentInput,
  RemoteAgentPatch,
  RunQueue,
  SessionInfo,
  SessionUser,
  Settings,
  SettingsUpdate,
  SoulFile,
  SpendReport,
  TeamRun,
  Template,
  UserInput,
  VisibilityInput,
} from "./types.js";

export interface ApiIssue {
  path: string;
  message: string;
}

/** What each stable error code of the server means, in the person's language. */
const ERROR_CODE_KEYS: Readonly<Record<string, MessageKey>> = {
  network: "error.network",
  invalid: "error.invalid",
  unauthenticated: "error.unauthenticated",
  forbidden: "error.forbidden",
  not_found: "error.not_found",
  conflict: "error.conflict",
  too_large: "error.too_large",
  rate_limited: "error.rate_limited",
  unavailable: "error.unavailable",
  internal: "error.internal",
  config: "error.config",
  auth: "error.auth",
  rate_limit: "error.rate_limit",
  provider_unavailable: "error.provider_unavailable",
  timeout: "error.timeout",
  bad_request: "error.bad_request",
  aborted: "error.aborted",
  tool_args: "error.tool_args",
  tool_failed: "error.tool_failed",
  output_invalid: "error.output_invalid",
};

/** A reply that was not the API's JSON (a proxy's page, say): its status's meaning. */
function statusKey(code: string): MessageKey | undefined {
  const status = Number(code.slice("http_".length));
  if (!code.startsWith("http_") || !Number.isInteger(status)) return undefined;
  if (status === 401) return "error.unauthenticated";
  if (status === 403) return "error.forbidden";
  if (status === 404) return "error.not_found";
  if (status === 413) return "error.too_large";
  if (status === 429) return "error.rate_limited";
  if (status >= 500) return "error.internal";
  return status >= 400 ? "error.bad_request" : undefined;
}

/** An API call that failed: the server's error code and message, or a network failure (status 0). */
/** A single sign-on provider as admins enter it. */
export interface SignInProviderInput {
  name: string;
  issuer: string;
  clientId: string;
  clientSecret?: string;
  allowedDomains: string[];
  roleClaim: string;
  roleMap: Record<string, "admin" | "member" | "guest">;
  newAccounts: "create" | "invited";
}

/** A provider as admins see it: never its secret. */
export interface SignInProvider extends Omit<SignInProviderInput, "clientSecret"> {
  id: string;
  hasSecret: boolean;
}

export interface SignInSettings {
  passwordSignIn: boolean;
  providers: SignInProvider[];
  /** The redirect URI to register with providers (`:id` stands for the provider's id). */
  callbackUrl: string;
}

/** What the sign-in page needs before anyone is signed in. */
export interface AuthStatus {
  needsSetup: boolean;
  signedIn?: boolean;
  /** Single sign-on buttons ("Sign in with …"). */
  providers?: Array<{ id: string; name: string }>;
  /** False: only the owner signs in with a password. */
  passwordSignIn?: boolean;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly issues: ApiIssue[];
  readonly retryAfterSeconds: number | undefined;

  constructor(status: number, code: string, message: string, issues: ApiIssue[] = [], retryAfter?: number) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.issues = issues;
    this.retryAfterSeconds = retryAfter;
  }
}

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export interface ApiClientOptions {
  /** Prefix for every path; empty in the browser (same origin), an http URL in tests. */
  baseUrl?: string;
  fetch?: typeof fetch;
  /** Called when an authenticated call comes back 401, so the app can show the login page. */
  onUnauthenticated?: () => void;
}

interface ErrorBody {
  error?: { code?: string; message?: string; issues?: ApiIssue[] };
}

const STATE_CHANGING: ReadonlySet<HttpMethod> = new Set(["POST", "PUT", "PATCH", "DELETE"]);

function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== "") search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

const enc = encodeURIComponent;

/** One method per route of the contract; all return parsed JSON or throw ApiError. */
export class ApiClient {
  private csrf: string | undefined;
  private readonly baseUrl: string;
  private readonly fetchFn: typeof fetch;
  private readonly onUnauthenticated: (() => void) | undefined;

  constructor(options: ApiClientOptions = {}) {
    this.baseUrl = options.baseUrl ?? "";
    // Bound so a bare `fetch` reference keeps its global receiver in browsers.
    this.fetchFn = options.fetch ?? ((input, init) => fetch(input, init));
    this.onUnauthenticated = options.onUnauthenticated;
  }

  /** The CSRF token of the current session, if logged in. */
  get csrfToken(): string | undefined {
    return this.csrf;
  }

  /** Forgets the CSRF token (after logout or when the session expired). */
  clearSession(): void {
    this.csrf = undefined;
  }

  /** Sends one request; JSON body in, parsed JSON (or undefined for 204) out. */
  async request<T>(method: HttpMethod, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (STATE_CHANGING.has(method) && this.csrf) headers["x-csrf-token"] = this.csrf;
    let response: Response;
    try {
      response = await this.fetchFn(`${this.baseUrl}${path}`, {
        method,
        headers,
        credentials: "same-origin",
        body: body === undefined ? null : JSON.stringify(body),
      });
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      throw new ApiError(0, "network", t("error.unreachable", { reason }));
    }
    if (!response.ok) throw await this.toError(response, path);
    if (response.status === 204) return undefined as T;
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  private async toError(response: Response, path: string): Promise<ApiError> {
    let parsed: ErrorBody = {};
    try {
      parsed = JSON.parse(await response.text()) as ErrorBody;
    } catch {
      // Not JSON (a proxy page, say): fall back to the status line below.
    }
    const retryHeader = response.headers.get("retry-after");
    const retryAfter = retryHeader ? Number(retryHeader) : undefined;
    const code = parsed.error?.code ?? `http_${response.status}`;
    const message = parsed.error?.message ?? `${response.status} ${response.statusText} from ${path}`;
    if (response.status === 401 && !path.startsWith("/api/auth/")) this.onUnauthenticated?.();
    return new ApiError(response.status, code, message, parsed.error?.issues ?? [], retryAfter);
  }

  private remember<T extends { csrfToken: string }>(result: T): T {
    this.csrf = result.csrfToken;
    return result;
  }

  // --- auth ---
  /** Whether the server still needs its first (owner) account. */
  authStatus(): Promise<AuthStatus> {
    return this.request("GET", "/api/auth/status");
  }
  /** Creates the owner account and logs in. */
  async setup(username: string, password: string, locale?: string): Promise<AuthResult> {
    return this.remember(
      await this.request<AuthResult>("POST", "/api/auth/setup", { username, password, locale }),
    );
  }
  /** Keeps the language of the web UI with the person (it follows them to other browsers). */
  setLocale(locale: string): Promise<void> {
    return this.request("PUT", "/api/auth/locale", { locale });
  }
  /** Logs in; the server sets the session cookie. */
  async login(username: string, password: string): Promise<AuthResult> {
    return this.remember(await this.request<AuthResult>("POST", "/api/auth/login", { username, password }));
  }
  /** The logged-in user (and a CSRF token for this page load), or ApiError 401. */
  async me(): Promise<{ user: SessionUser; csrfToken: string }> {
    return this.remember(await this.request<{ user: SessionUser; csrfToken: string }>("GET", "/api/auth/me"));
  }
  /** Ends this session. */
  async logout(): Promise<void> {
    await this.request<void>("POST", "/api/auth/logout");
    this.csrf = undefined;
  }
  /** Ends every session of this user. */
  async logoutAll(): Promise<void> {
    await this.request<void>("POST", "/api/auth/logout-all");
    this.csrf = undefined;
  }
  /** Changes the caller's password; the server logs out their other sessions. */
  changePassword(currentPassword: string, newPassword: string): Promise<void> {
    return this.request("POST", "/api/auth/password", { currentPassword, newPassword });
  }
  /** This user's sessions. */
  listSessions(): Promise<SessionInfo[]> {
    return this.request("GET", "/api/auth/sessions");
  }
  /** Revokes one session. */
  revokeSession(id: string): Promise<void> {
    return this.request("DELETE", `/api/auth/sessions/${enc(id)}`);
  }

  // --- users ---
  /** Every user (owner/admin). */
  listUsers(): Promise<SessionUser[]> {
    return this.request("GET", "/api/users");
  }
  /** Creates a user (owner/admin). */
  createUser(input: UserInput): Promise<SessionUser> {
    return this.request("POST", "/api/users", input);
  }
  /** Changes a user's role or password. */
  updateUser(
    id: string,
    patch: Partial<Omit<UserInput, "username">> & { disabled?: boolean },
  ): Promise<SessionUser> {
    return this.request("PATCH", `/api/users/${enc(id)}`, patch);
  }
  /** Deletes a user. */
  deleteUser(id: string): Promise<void> {
    return this.request("DELETE", `/api/users/${enc(id)}`);
  }

  // --- agents ---
  /** Every agent, each with its persona status. */
  listAgents(): Promise<AgentRecord[]> {
    return this.request("GET", "/api/agents");
  }
  /** One agent. */
  getAgent(id: string): Promise<AgentRecord> {
    return this.request("GET", `/api/agents/${enc(id)}`);
  }
  /** Creates an agent. */
  createAgent(input: AgentInput): Promise<AgentRecord> {
    return this.request("POST", "/api/agents", input);
  }
  /** Changes an agent. */
  updateAgent(id: string, patch: AgentPatch | AgentPatchBody): Promise<AgentRecord> {
    return this.request("PATCH", `/api/agents/${enc(id)}`, patch);
  }
  /** Deletes an agent. */
  deleteAgent(id: string): Promise<void> {
    return this.request("DELETE", `/api/agents/${enc(id)}`);
  }
  /** An agent's SOUL.md persona. */
  getSoul(id: string): Promise<SoulFile> {
    return this.request("GET", `/api/agents/${enc(id)}/soul`);
  }
  /** Replaces an agent's SOUL.md persona. */
  putSoul(id: string, content: string): Promise<SoulFile> {
    return this.request("PUT", `/api/agents/${enc(id)}/soul`, { content });
  }

  /** The tool catalogue agents are given from (built-ins, memory, knowledge, MCP, HTTP, plugins, team). */
  listTools(): Promise<CatalogueEntry[]> {
    return this.request("GET", "/api/tools");
  }
  /** Models a picker offers: the catalogue plus what each configured provider lists. */
  listModels(): Promise<ModelsResponse> {
    return this.request("GET", "/api/models");
  }

  // --- memory (own, or anyone's for admins via `userId`) ---
  /** Archival memories, newest first, or ranked by `q`; with `agentId`, what that agent sees. */
  listMemories(
    options: { userId?: string; agentId?: string; q?: string; limit?: number } = {},
  ): Promise<MemoryRecord[]> {
    return this.request("GET", `/api/memory${query({ ...options })}`);
  }
  /** Edits one memory's text (or type, importance). */
  updateMemory(
    id: string,
    edit: { text?: string; type?: MemoryType; importance?: number },
    userId?: string,
  ): Promise<MemoryRecord> {
    return this.request("PATCH", `/api/memory/${enc(id)}${query({ userId })}`, edit);
  }
  /** Forgets one memory. */
  forgetMemory(id: string, userId?: string): Promise<void> {
    return this.request("DELETE", `/api/memory/${enc(id)}${query({ userId })}`);
  }
  /** Every core block of the person: shared ones and each agent's own. */
  coreBlocks(userId?: string): Promise<CoreBlock[]> {
    return this.request("GET", `/api/memory/core${query({ userId })}`);
  }
  /** Replaces a core block's text (the agent's own with `agentId`, else the shared one). */
  setCoreBlock(
    label: string,
    value: string,
    scope: { userId?: string; agentId?: string },
  ): Promise<CoreBlock> {
    return this.request("PUT", `/api/memory/core/${enc(label)}${query({ ...scope })}`, { value });
  }
  /** Deletes a core block. */
  deleteCoreBlock(label: string, scope: { userId?: string; agentId?: string }): Promise<void> {
    return this.request("DELETE", `/api/memory/core/${enc(label)}${query({ ...scope })}`);
  }

  // --- channels and messages ---
  /** The channels this user can see, with unread counts. */
  listChannels(): Promise<ChannelSummary[]> {
    return this.request("GET", "/api/channels");
  }
  /** One channel. */
  getChannel(id: string): Promise<ChannelRecord> {
    return this.request("GET", `/api/channels/${enc(id)}`);
  }
  /** The names of a chat's people (anyone who may read the chat). */
  channelPeople(id: string): Promise<Array<{ id: string; username: string }>> {
    return this.request("GET", `/api/channels/${enc(id)}/people`);
  }
  /** Creates a direct chat or a group. */
  createChannel(input: ChannelInput): Promise<ChannelRecord> {
    return this.request("POST", "/api/channels", input);
  }
  /**
   * Renames a channel, changes its leader (null clears it) or what happens to messages sent while
   * an agent is working (`queueMode`).
   */
  updateChannel(
    id: string,
    patch: { name?: string; leaderAgentId?: string | null; queueMode?: QueueMode },
  ): Promise<ChannelRecord> {
    return this.request("PATCH", `/api/channels/${enc(id)}`, patch);
  }
  /** Pins or archives a chat for this person alone. */
  setChannelPrefs(id: string, patch: { pinned?: boolean; archived?: boolean }): Promise<ChannelPrefs> {
    return this.request("PUT", `/api/channels/${enc(id)}/prefs`, patch);
  }
  /** Names a direct chat after its first exchange (the agent's model, or the question's first words). */
  titleChannel(id: string): Promise<ChannelRecord> {
    return this.request("POST", `/api/channels/${enc(id)}/title`);
  }
  /** Deletes a channel. */
  deleteChannel(id: string): Promise<void> {
    return this.request("DELETE", `/api/channels/${enc(id)}`);
  }
  /** Adds an agent or a user to a channel. */
  addMember(channelId: string, member: ChannelMember): Promise<ChannelRecord> {
    return this.request("POST", `/api/channels/${enc(channelId)}/members`, member);
  }
  /** Removes an agent or a user from a channel. */
  removeMember(channelId: string, member: ChannelMember): Promise<ChannelRecord> {
    return this.request(
      "DELETE",
      `/api/channels/${enc(channelId)}/members/${enc(member.type)}/${enc(member.id)}`,
    );
  }
  /** Replaces a group's collaboration chain. */
  setChain(channelId: string, steps: ChainStep[]): Promise<ChannelRecord> {
    return this.request("PUT", `/api/channels/${enc(channelId)}/chain`, { steps });
  }
  /** A page of messages, oldest first. */
  listMessages(
    channelId: string,
    options: { before?: number; after?: number; limit?: number } = {},
  ): Promise<ChannelMessage[]> {
    return this.request("GET", `/api/channels/${enc(channelId)}/messages${query({ ...options })}`);
  }
  /**
   * Posts a message; the result names the runs (and flow) it started, and the agents it reached
   * without a new run (`queued`).
   */
  postMessage(channelId: string, text: string, attachments: readonly string[] = []): Promise<PostResult> {
    return this.request(
      "POST",
      `/api/channels/${enc(channelId)}/messages`,
      attachments.length > 0 ? { text, attachments } : { text },
    );
  }
  /** What a file to attach may be: its size limit per kind and the files per message. */
  attachmentLimits(): Promise<AttachmentLimits> {
    return this.request("GET", "/api/attachments/limits");
  }
  /** Marks a channel read up to a message. */
  markRead(channelId: string, messageId: number): Promise<void> {
    return this.request("POST", `/api/channels/${enc(channelId)}/read`, { messageId });
  }
  /** Deletes a message. */
  deleteMessage(id: number): Promise<void> {
    return this.request("DELETE", `/api/messages/${id}`);
  }
  /** A new answer to the message an agent answer replied to (the old one stays as a version). */
  regenerate(id: number): Promise<PostResult> {
    return this.request("POST", `/api/messages/${id}/regenerate`);
  }
  /** Changes the text of one's own last message and answers it again. */
  editMessage(id: number, text: string): Promise<PostResult> {
    return this.request("PATCH", `/api/messages/${id}`, { text });
  }
  /** Full-text search over the channels this user can see. */
  search(q: string, channelId?: string): Promise<ChannelMessage[]> {
    return this.request("GET", `/api/search${query({ q, channelId })}`);
  }

  // --- runs and flows ---
  /** The channel's ended runs: each answer's model, tokens, cost and times. */
  channelRuns(channelId: string): Promise<TeamRun[]> {
    return this.request("GET", `/api/channels/${enc(channelId)}/runs`);
  }
  /** Spend per day and provider and per day and agent (admins: everyone's; others: their own). */
  /** Every budget with what was spent in its period (owners and admins). */
  budgets(): Promise<BudgetStatus[]> {
    return this.request("GET", "/api/budgets");
  }
  /** The caller's own budgets and what remains of them. */
  myBudgets(): Promise<BudgetStatus[]> {
    return this.request("GET", "/api/budgets/mine");
  }
  createBudget(input: BudgetInput): Promise<BudgetStatus> {
    return this.request("POST", "/api/budgets", input);
  }
  deleteBudget(id: string): Promise<void> {
    return this.request("DELETE", `/api/budgets/${enc(id)}`);
  }
  /** Audit log entries (owners and admins), newest first. */
  auditEntries(filters: AuditFilters, before?: number): Promise<{ entries: AuditEntry[] }> {
    return this.request("GET", `/api/audit${query({ ...filters, before, limit: 100 })}`);
  }
  /** The address that downloads the filtered audit log as CSV or JSON Lines. */
  auditExportUrl(filters: AuditFilters, format: "csv" | "jsonl"): string {
    return `${this.baseUrl}/api/audit/export${query({ ...filters, format })}`;
  }
  /** Checks the audit log's hash chain. */
  auditVerify(): Promise<AuditVerification> {
    return this.request("GET", "/api/audit/verify");
  }
  auditSettings(): Promise<{ retentionDays: number }> {
    return this.request("GET", "/api/audit/settings");
  }
  setAuditRetention(retentionDays: number): Promise<{ retentionDays: number }> {
    return this.request("PUT", "/api/audit/settings", { retentionDays });
  }
  spend(days: number): Promise<SpendReport> {
    return this.request("GET", `/api/spend${query({ days: String(days) })}`);
  }
  /** One run. */
  getRun(id: string): Promise<TeamRun> {
    return this.request("GET", `/api/runs/${enc(id)}`);
  }
  /** Cancels one run; others in the channel keep going. */
  cancelRun(id: string): Promise<TeamRun> {
    return this.request("POST", `/api/runs/${enc(id)}/cancel`);
  }
  /** Answers an MCP server's request for input put to this person during a run. */
  answerElicitation(runId: string, id: string, answer: ElicitationAnswer): Promise<ElicitationView> {
    return this.request("POST", `/api/runs/${enc(runId)}/elicitations/${enc(id)}`, answer);
  }
  /** Approves or rejects a tool call the run waits on; the run goes on once nothing is pending. */
  /** Where the chat's iframe loads the MCP App a tool call of a run rendered (sandboxed by the server). */
  mcpAppUrl(channelId: string, runId: string, callId: string): string {
    return `${this.baseUrl}/api/channels/${enc(channelId)}/mcp-apps/${enc(runId)}/${enc(callId)}`;
  }

  /** An MCP App's `tools/call`, run through the agent's rules (or held for approval). */
  callMcpAppTool(
    channelId: string,
    runId: string,
    callId: string,
    name: string,
    args: Record<string, unknown>,
  ): Promise<McpAppCallOutcome> {
    return this.request(
      "POST",
      `/api/channels/${enc(channelId)}/mcp-apps/${enc(runId)}/${enc(callId)}/tools/call`,
      { name, arguments: args },
    );
  }

  /** Approves or declines an MCP App's call that waits; approved, the call runs and its result comes back. */
  decideMcpAppCall(
    channelId: string,
    runId: string,
    callId: string,
    approvalId: string,
    decision: { decision: "approve" | "reject"; always?: boolean },
  ): Promise<McpAppCallOutcome> {
    return this.request(
      "POST",
      `/api/channels/${enc(channelId)}/mcp-apps/${enc(runId)}/${enc(callId)}/approvals/${enc(approvalId)}`,
      decision,
    );
  }

  decideApproval(runId: string, callId: string, decision: ApprovalDecisionInput): Promise<TeamRun> {
    return this.request("POST", `/api/runs/${enc(runId)}/approvals/${enc(callId)}`, decision);
  }
  /** The tools agents may run in a chat without asking ("always" answers). */
  listApprovalGrants(channelId: string): Promise<ApprovalGrant[]> {
    return this.request("GET", `/api/channels/${enc(channelId)}/approvals`);
  }
  /** Revokes an "always" answer: the agent asks again before running the tool in this chat. */
  revokeApprovalGrant(channelId: string, agentId: string, tool: string): Promise<void> {
    return this.request("DELETE", `/api/channels/${enc(channelId)}/approvals/${enc(agentId)}/${enc(tool)}`);
  }
  /** This person's open requests for input in a channel. */
  listElicitations(channelId: string): Promise<ElicitationView[]> {
    return this.request("GET", `/api/channels/${enc(channelId)}/elicitations`);
  }
  /** The stored trace events of a run. */
  getRunTrace(id: string): Promise<unknown[]> {
    return this.request("GET", `/api/runs/${enc(id)}/trace`);
  }
  /** One collaboration flow. */
  getFlow(id: string): Promise<FlowRecord> {
    return this.request("GET", `/api/flows/${enc(id)}`);
  }
  /** Pauses, resumes, stops, skips, retries, approves or edits a flow. */
  flowAction(id: string, action: FlowAction): Promise<FlowRecord> {
    return this.request("POST", `/api/flows/${enc(id)}/actions`, action);
  }

  // --- settings, tokens, MCP ---
  /** Owners and admins: the answers live and waiting to start on this instance, and what holds them. */
  getRunQueue(): Promise<RunQueue> {
    return this.request("GET", "/api/runs/queue");
  }
  /** Providers (keys previewed only) and the default model. */
  getSettings(): Promise<Settings> {
    return this.request("GET", "/api/settings");
  }
  /** Changes providers or the default model; an `apiKey` replaces the stored key. */
  putSettings(update: SettingsUpdate): Promise<Settings> {
    return this.request("PUT", "/api/settings", update);
  }
  /** Saves one provider's key, base URL or protocol; the other providers stay as they are. */
  saveProvider({ name, ...update }: ProviderUpdate): Promise<Settings> {
    return this.request("PUT", `/api/settings/providers/${enc(name)}`, update);
  }
  /** Forgets what was saved for one provider (a built-in one falls back to the environment). */
  removeProvider(name: string): Promise<Settings> {
    return this.request("DELETE", `/api/settings/providers/${enc(name)}`);
  }
  /** Whether the default model can run, for everyone signed in. */
  modelStatus(): Promise<ModelStatus> {
    return this.request("GET", "/api/models/status");
  }
  /** This user's API tokens (previews only). */
  listTokens(): Promise<ApiTokenInfo[]> {
    return this.request("GET", "/api/tokens");
  }
  /** Creates an API token; the full token is in this response only. */
  createToken(name: string): Promise<CreatedToken> {
    return this.request("POST", "/api/tokens", { name });
  }
  /** Revokes an API token. */
  deleteToken(id: string): Promise<void> {
    return this.request("DELETE", `/api/tokens/${enc(id)}`);
  }
  /** MCP servers and their connection status. */
  async listMcp(): Promise<McpServerInfo[]> {
    // Accept a bare array or `{servers: [...]}`: the contract only says "servers with status".
    const body = await this.request<McpServerInfo[] | { servers?: McpServerInfo[] }>("GET", "/api/mcp");
    return Array.isArray(body) ? body : (body.servers ?? []);
  }
  /** The prompts of the MCP servers this person may use (`/` in the composer). */
  listMcpPrompts(): Promise<McpPromptInfo[]> {
    return this.request("GET", "/api/mcp/prompts");
  }
  /** A prompt's text with its arguments filled in. */
  getMcpPrompt(server: string, name: string, args: Record<string, string>): Promise<{ text: string }> {
    return this.request("POST", `/api/mcp/prompts/${enc(server)}/${enc(name)}`, { arguments: args });
  }
  /** Connects an MCP server. */
  connectMcp(name: string): Promise<unknown> {
    return this.request("POST", `/api/mcp/${enc(name)}/connect`);
  }
  /** Adds an MCP server (saved on the server and started at once). */
  addMcp(server: McpServerInput): Promise<McpServerInfo> {
    return this.request("POST", "/api/mcp", server);
  }
  /** Stops and forgets an MCP server added in Settings. */
  removeMcp(name: string): Promise<void> {
    return this.request("DELETE", `/api/mcp/${enc(name)}`);
  }
  /** Changes who sees an MCP server (its owner or an admin). */
  setMcpVisibility(name: string, patch: VisibilityInput): Promise<unknown> {
    return this.request("PATCH", `/api/mcp/${enc(name)}`, patch);
  }
  /** Remote A2A agents: a2a.json's and those added in Settings (owners and admins). */
  /** Single sign-on set-up (owners and admins): providers, and whether password sign-in stays on. */
  getSignIn(): Promise<SignInSettings> {
    return this.request("GET", "/api/sso");
  }
  /** Adds or replaces a provider; a secret left out keeps the saved one. */
  saveSignInProvider(id: string, provider: SignInProviderInput): Promise<SignInProvider> {
    return this.request("PUT", `/api/sso/providers/${enc(id)}`, provider);
  }
  removeSignInProvider(id: string): Promise<void> {
    return this.request("DELETE", `/api/sso/providers/${enc(id)}`);
  }
  setPasswordSignIn(enabled: boolean): Promise<void> {
    return this.request("PUT", "/api/sso/password-sign-in", { enabled });
  }
  listRemoteAgents(): Promise<RemoteAgentInfo[]> {
    return this.request("GET", "/api/remote-agents");
  }
  /** Adds a remote agent; agents can call it from their next run. */
  addRemoteAgent(agent: RemoteAgentInput): Promise<RemoteAgentInfo> {
    return this.request("POST", "/api/remote-agents", agent);
  }
  /** Changes a remote agent added in Settings (URL, token, description, on or off). */
  updateRemoteAgent(name: string, patch: RemoteAgentPatch): Promise<RemoteAgentInfo> {
    return this.request("PATCH", `/api/remote-agents/${enc(name)}`, patch);
  }
  /** Forgets a remote agent added in Settings. */
  removeRemoteAgent(name: string): Promise<void> {
    return this.request("DELETE", `/api/remote-agents/${enc(name)}`);
  }
  /** Reads a remote agent's card: its name and skills, or why it cannot be reached. */
  checkRemoteAgent(name: string): Promise<RemoteAgentCheck> {
    return this.request("POST", `/api/remote-agents/${enc(name)}/check`);
  }
  // --- team templates ---
  /** The built-in gallery of ready teams. */
  listTemplates(locale?: string): Promise<GalleryEntry[]> {
    return this.request("GET", `/api/templates${query({ locale })}`);
  }
  /** Creates what a template holds (agents; for a team also its group, chain and schedules). */
  importTemplate(template: unknown): Promise<ImportResult> {
    return this.request("POST", "/api/templates/import", template);
  }
  /** An agent as a template file. */
  exportAgent(id: string): Promise<Template> {
    return this.request("GET", `/api/agents/${enc(id)}/export`);
  }
  /** A group, its agents, chain and the caller's schedules on it, as a template file. */
  exportChannel(id: string): Promise<Template> {
    return this.request("GET", `/api/channels/${enc(id)}/export`);
  }

  /** Disconnects an MCP server. */
  disconnectMcp(name: string): Promise<unknown> {
    return this.request("POST", `/api/mcp/${enc(name)}/disconnect`);
  }
}

/** A person-readable line for any error thrown by an API call. */
/** A validation issue as a sentence: `name: at most 80 characters` reads "The name: at most 80 characters." */
function issueText(issue: { path: string; message: string }): string {
  const field =
    issue.path
      .split(".")
      .pop()
      ?.replace(/([a-z])([A-Z])/g, "$1 $2")
      .toLowerCase() ?? "";
  const message = issue.message.replace(/\.+$/, "");
  return field === ""
    ? `${message[0]?.toUpperCase() ?? ""}${message.slice(1)}.`
    : `The ${field}: ${message}.`;
}

export function errorText(err: unknown): string {
  if (err instanceof ApiError) {
    const first = err.issues[0];
    const detail = first ? issueText(first) : err.message;
    // The server answers in English with a stable code: other languages lead with the code's meaning.
    if (err.code === "network") return detail;
    const key = ERROR_CODE_KEYS[err.code] ?? statusKey(err.code);
    return key && currentLocale() !== "en" ? `${t(key)}（${detail}）` : detail;
  }
  return err instanceof Error ? err.message : String(err);
}
