/**
 * One configured MCP server over its lifetime: connect under a time limit, list its tools, call them,
 * notice when it crashes or exits, reconnect with backoff on the next use, re-initialise an HTTP session
 * the server forgot (404), and refresh the tool list on `notifications/tools/list_changed`.
 */

import type {
  Client,
  GetPromptResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplateType,
} from "@modelcontextprotocol/client";
import { SdkError, SdkErrorCode, UnauthorizedError } from "@modelcontextprotocol/client";
import { DimsumError } from "../errors.js";
import type { JsonSchema } from "../llm/types.js";
import type { ElicitPerson, SamplePerson } from "../tools/types.js";
import { type McpToolUi, toolUiOf } from "./app-meta.js";
import { clientCapabilities, installClientHandlers, type McpClientHandlers } from "./client-handlers.js";
import type { McpServerConfig } from "./config.js";
import {
  describeConnectError,
  formatMs,
  isConnectionError,
  isSessionExpired,
  messageOf,
} from "./connection-errors.js";
import type { McpAuthOptions } from "./oauth/http-auth.js";
import { type McpSession, openSession } from "./open-session.js";
import { StderrTail } from "./stderr-tail.js";
import type { McpCallResult } from "./tool-result.js";

export type McpServerState = "connecting" | "connected" | "failed" | "disabled" | "closed";

/** A tool as the server describes it (after include/exclude). */
export interface McpToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema: JsonSchema;
  annotations?: Record<string, unknown>;
  /** The tool's MCP App (`_meta.ui`), when it declares one. */
  ui?: McpToolUi;
}

export interface McpServerStatus {
  name: string;
  /** Configured transport, or the one the session settled on (`streamable-http` or `sse`). */
  transport: string;
  state: McpServerState;
  toolCount: number;
  lastError?: string;
  /** Process id of a running stdio server. */
  pid?: number;
  serverInfo?: { name: string; version: string };
  /** The MCP revision the session speaks (`2026-07-28`, or a 2025 one after the fallback). */
  protocolVersion?: string;
  /** The last lines the server wrote to stderr (stdio only). */
  stderr: string[];
  /** Tools left out because Dimsum could not use them (e.g. an unusable input schema). */
  skippedTools?: string[];
  /** The server wants an OAuth sign-in (`dimsum mcp login <server>`). */
  needsLogin?: boolean;
  /** What else the server offers besides tools. */
  features?: { resources: boolean; prompts: boolean };
}

export type {
  GetPromptResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplateType as ResourceTemplate,
};

export interface ServerConnectionOptions {
  env: Readonly<Record<string, string | undefined>>;
  clientInfo: { name: string; version: string };
  /** Limit for start + initialize + first tool listing, unless the server config sets its own. */
  connectTimeoutMs: number;
  /** Called with the filtered tool list after connecting and after each refresh. */
  onTools: (tools: McpToolInfo[]) => void;
  onStatus: (status: McpServerStatus) => void;
  /** Which tools to keep (include/exclude). */
  filter: (toolName: string) => boolean;
  /** OAuth logins and the browser step. */
  auth?: McpAuthOptions;
  /** Elicitation, sampling and roots. */
  handlers?: McpClientHandlers;
}

export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Receives the server's progress notifications for this call, as one line each. */
  onProgress?: (message: string) => void;
  /** Who answers the server's requests for input during this call (a team run's person). */
  elicit?: ElicitPerson;
  /** Who approves (and serves) the server's sampling requests during this call. */
  sample?: SamplePerson;
}

/** A call in flight: the notes for its result and who answers requests for input or sampling. */
interface InFlight {
  notes: string[];
  elicit?: ElicitPerson;
  sample?: SamplePerson;
}

/** A server that stays up this long is considered healthy again: its next crash reconnects at once. */
const HEALTHY_UPTIME_MS = 30_000;
const MAX_BACKOFF_MS = 30_000;
const REFRESH_DEBOUNCE_MS = 50;

/** Owns the session with one server; every public method is safe to call in any state. */
export class ServerConnection {
  readonly config: McpServerConfig;
  readonly #options: ServerConnectionOptions;
  readonly #stderr = new StderrTail();
  #state: McpServerState;
  #session: McpSession | undefined;
  #tools: McpToolInfo[] = [];
  #lastError: string | undefined;
  #serverInfo: { name: string; version: string } | undefined;
  #connecting: Promise<boolean> | undefined;
  #generation = 0;
  #failures = 0;
  #retryAt = 0;
  #connectedAt = 0;
  #refreshTimer: NodeJS.Timeout | undefined;
  #needsLogin = false;
  /** Notes of the calls in flight (declined elicitations and the like), appended to their results. */
  readonly #inflight = new Set<InFlight>();

  constructor(config: McpServerConfig, options: ServerConnectionOptions) {
    this.config = config;
    this.#options = options;
    this.#state = config.enabled ? "connecting" : "disabled";
  }

  get state(): McpServerState {
    return this.#state;
  }

  /** The current tool list (empty until connected). */
  tools(): McpToolInfo[] {
    return [...this.#tools];
  }

  status(): McpServerStatus {
    const status: McpServerStatus = {
      name: this.config.name,
      transport: this.#session?.transport ?? this.config.transport,
      state: this.#state,
      toolCount: this.#tools.length,
      stderr: this.#stderr.lines(),
    };
    if (this.#lastError !== undefined) status.lastError = this.#lastError;
    if (this.#session?.pid !== undefined) status.pid = this.#session.pid;
    if (this.#serverInfo) status.serverInfo = this.#serverInfo;
    if (this.#session?.protocolVersion) status.protocolVersion = this.#session.protocolVersion;
    if (this.#needsLogin) status.needsLogin = true;
    const caps = this.#session?.client.getServerCapabilities();
    if (caps)
      status.features = { resources: caps.resources !== undefined, prompts: caps.prompts !== undefined };
    return status;
  }

  /** Connects (or reconnects now, ignoring backoff); true when connected. Never throws. */
  connect(): Promise<boolean> {
    if (this.#state === "connected") return Promise.resolve(true);
    this.#connecting ??= this.#connect().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  /** Connected, or reconnected if the backoff allows; throws DimsumError naming the server otherwise. */
  async ensureConnected(): Promise<Client> {
    if (this.#state === "disabled" || this.#state === "closed") {
      throw this.#unavailable(this.#state === "disabled" ? "it is disabled in mcp.json" : "it was shut down");
    }
    if (this.#state !== "connected" && !this.#connecting) {
      const wait = this.#retryAt - Date.now();
      if (wait > 0) {
        throw this.#unavailable(
          `${this.#lastError ?? "it is not connected"}; next reconnect attempt in ${Math.ceil(wait / 1000)} s`,
        );
      }
    }
    if (!(await this.connect()) || !this.#session) {
      throw this.#unavailable(this.#lastError ?? "it did not connect");
    }
    return this.#session.client;
  }

  /** Calls a tool by its MCP name. Throws DimsumError when the server cannot be reached. */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    options: CallOptions = {},
  ): Promise<McpCallResult> {
    const call: InFlight = {
      notes: [],
      ...(options.elicit ? { elicit: options.elicit } : {}),
      ...(options.sample ? { sample: options.sample } : {}),
    };
    this.#inflight.add(call);
    try {
      return withNotes(await this.#callOnce(name, args, options), call.notes);
    } finally {
      this.#inflight.delete(call);
    }
  }

  /** Runs `use` with the connected client; a step-up the server asks for runs the login once and retries. */
  async request<T>(what: string, use: (client: Client) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const client = await this.ensureConnected();
    const session = this.#session;
    try {
      return await use(client);
    } catch (err) {
      if (err instanceof UnauthorizedError && session && (await session.completeAuthorization(signal))) {
        return use(client).catch((retryErr: unknown) => {
          throw this.#callError(what, retryErr, {});
        });
      }
      throw this.#callError(what, err, {});
    }
  }

  /** Resources, resource templates and prompts (all pages); empty when the server offers none. */
  async listResources(): Promise<Resource[]> {
    return this.#pages("resources/list", async (client, cursor) => {
      if (!client.getServerCapabilities()?.resources) return { items: [] };
      const page = await client.listResources(cursor ? { cursor } : {});
      return { items: page.resources, ...(page.nextCursor ? { next: page.nextCursor } : {}) };
    });
  }

  async listResourceTemplates(): Promise<ResourceTemplateType[]> {
    return this.#pages("resources/templates/list", async (client, cursor) => {
      if (!client.getServerCapabilities()?.resources) return { items: [] };
      const page = await client.listResourceTemplates(cursor ? { cursor } : {});
      return { items: page.resourceTemplates, ...(page.nextCursor ? { next: page.nextCursor } : {}) };
    });
  }

  readResource(uri: string, signal?: AbortSignal): Promise<ReadResourceResult> {
    return this.request(
      `resources/read ${uri}`,
      (client) => client.readResource({ uri }, signal ? { signal } : {}),
      signal,
    );
  }

  async listPrompts(): Promise<Prompt[]> {
    return this.#pages("prompts/list", async (client, cursor) => {
      if (!client.getServerCapabilities()?.prompts) return { items: [] };
      const page = await client.listPrompts(cursor ? { cursor } : {});
      return { items: page.prompts, ...(page.nextCursor ? { next: page.nextCursor } : {}) };
    });
  }

  getPrompt(name: string, args: Record<string, string>, signal?: AbortSignal): Promise<GetPromptResult> {
    return this.request(
      `prompts/get ${name}`,
      (client) => client.getPrompt({ name, arguments: args }, signal ? { signal } : {}),
      signal,
    );
  }

  async #pages<T>(
    what: string,
    page: (client: Client, cursor: string | undefined) => Promise<{ items: T[]; next?: string }>,
  ): Promise<T[]> {
    const out: T[] = [];
    let cursor: string | undefined;
    do {
      const result = await this.request(what, (client) => page(client, cursor));
      out.push(...result.items);
      cursor = result.next;
    } while (cursor);
    return out;
  }

  async #callOnce(name: string, args: Record<string, unknown>, options: CallOptions): Promise<McpCallResult> {
    await this.ensureConnected();
    const session = this.#session;
    if (!session) throw this.#unavailable(this.#lastError ?? "it is not connected");
    try {
      return await this.#call(session, name, args, options);
    } catch (err) {
      if (err instanceof UnauthorizedError && (await session.completeAuthorization(options.signal))) {
        try {
          return await this.#call(session, name, args, options);
        } catch (retryErr) {
          throw this.#callError(name, retryErr, options);
        }
      }
      if (!isSessionExpired(err)) {
        // The stdio close handler has already reported a crash; an HTTP failure is noticed only here.
        if (isConnectionError(err) && this.#session === session) {
          await this.#dropSession(`the connection failed: ${messageOf(err)}`);
        }
        throw this.#callError(name, err, options);
      }
      // The server restarted or dropped our HTTP session: start a new one and try once more.
      if (this.#session === session) await this.#dropSession("the server forgot the HTTP session");
      const fresh = await this.ensureConnected().then(() => this.#session);
      if (!fresh) throw this.#unavailable(this.#lastError ?? "it did not reconnect");
      try {
        return await this.#call(fresh, name, args, options);
      } catch (retryErr) {
        throw this.#callError(name, retryErr, options);
      }
    }
  }

  /** Shuts the server down (stdio children are asked to exit, then killed). */
  async close(): Promise<void> {
    this.#state = "closed";
    this.#generation++;
    clearTimeout(this.#refreshTimer);
    const session = this.#session;
    this.#session = undefined;
    await session?.close();
    this.#emit();
  }

  async #connect(): Promise<boolean> {
    if (this.#state === "disabled" || this.#state === "closed") return false;
    if (this.config.problem) return this.#fail(this.config.problem, false);
    const generation = ++this.#generation;
    this.#state = "connecting";
    this.#stderr.clear();
    this.#emit();
    const limitMs = this.config.connectTimeoutMs ?? this.#options.connectTimeoutMs;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), limitMs);
    let session: McpSession | undefined;
    try {
      session = await openSession(this.config, {
        env: this.#options.env,
        clientInfo: this.#options.clientInfo,
        signal: controller.signal,
        stderr: this.#stderr,
        onUnexpectedClose: (reason) => this.#lost(generation, reason),
        capabilities: clientCapabilities(this.#options.handlers ?? {}),
        ...(this.#options.auth ? { auth: this.#options.auth } : {}),
        prepare: (client) => {
          client.setNotificationHandler("notifications/tools/list_changed", () =>
            this.#scheduleRefresh(generation),
          );
          installClientHandlers(
            client,
            this.config.name,
            this.#options.handlers ?? {},
            (note) => {
              for (const call of this.#inflight) call.notes.push(note);
            },
            { elicit: () => this.#route("elicit"), sample: () => this.#route("sample") },
          );
        },
      });
      const opened = session;
      const listOptions = { signal: controller.signal, timeout: limitMs };
      const tools = await this.#listTools(opened.client, listOptions).catch(async (err: unknown) => {
        // The server may ask for a sign-in only after `initialize`: sign in, then list again.
        if (err instanceof UnauthorizedError && (await opened.completeAuthorization(controller.signal))) {
          return this.#listTools(opened.client, listOptions);
        }
        throw err;
      });
      if (generation !== this.#generation) {
        await session.close();
        return false;
      }
      this.#session = session;
      this.#tools = tools;
      this.#serverInfo = session.client.getServerVersion();
      this.#state = "connected";
      this.#lastError = undefined;
      this.#needsLogin = false;
      this.#failures = 0;
      this.#connectedAt = Date.now();
      this.#emit();
      this.#options.onTools(this.tools());
      return true;
    } catch (err) {
      await session?.close();
      if (generation !== this.#generation) return false;
      this.#needsLogin = needsLogin(err);
      const reason = controller.signal.aborted
        ? `did not finish connecting within ${formatMs(limitMs)}`
        : describeConnectError(this.config, err);
      return this.#fail(reason, true);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * MCP does not say which call a request (for input, or for sampling) belongs to: with one asker
   * among the calls in flight it is theirs; with several (two runs calling this server at once)
   * nobody can be sure.
   */
  #route<K extends "elicit" | "sample">(
    kind: K,
  ): NonNullable<InFlight[K]> | { declined: string } | undefined {
    const askers = new Set<NonNullable<InFlight[K]>>();
    for (const call of this.#inflight) {
      const asker = call[kind];
      if (asker) askers.add(asker as NonNullable<InFlight[K]>);
    }
    if (askers.size > 1) {
      return { declined: "calls of several runs were in flight, so it was unclear whom to ask" };
    }
    return [...askers][0];
  }

  async #listTools(
    client: Client,
    options: { signal?: AbortSignal; timeout: number },
  ): Promise<McpToolInfo[]> {
    if (!client.getServerCapabilities()?.tools) return [];
    const tools: McpToolInfo[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {}, options);
      for (const tool of page.tools) {
        if (!this.#options.filter(tool.name)) continue;
        const info: McpToolInfo = { name: tool.name, inputSchema: tool.inputSchema as JsonSchema };
        if (tool.title) info.title = tool.title;
        if (tool.description) info.description = tool.description;
        if (tool.annotations) info.annotations = { ...tool.annotations };
        const ui = toolUiOf(tool._meta);
        if (ui) info.ui = ui;
        tools.push(info);
      }
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  #call(session: McpSession, name: string, args: Record<string, unknown>, options: CallOptions) {
    const timeout = options.timeoutMs ?? this.config.timeoutMs;
    const { onProgress } = options;
    return session.client.callTool(
      { name, arguments: args },
      {
        ...(options.signal ? { signal: options.signal } : {}),
        ...(timeout ? { timeout } : {}),
        ...(onProgress
          ? {
              onprogress: (p: { progress: number; total?: number; message?: string }) =>
                onProgress(`${p.progress}${p.total ? `/${p.total}` : ""}${p.message ? ` ${p.message}` : ""}`),
            }
          : {}),
      },
    ) as Promise<McpCallResult>;
  }

  #scheduleRefresh(generation: number): void {
    clearTimeout(this.#refreshTimer);
    this.#refreshTimer = setTimeout(() => {
      void this.#refresh(generation);
    }, REFRESH_DEBOUNCE_MS);
  }

  async #refresh(generation: number): Promise<void> {
    const session = this.#session;
    if (!session || generation !== this.#generation) return;
    const limitMs = this.config.connectTimeoutMs ?? this.#options.connectTimeoutMs;
    try {
      const tools = await this.#listTools(session.client, { timeout: limitMs });
      if (generation !== this.#generation) return;
      this.#tools = tools;
      this.#emit();
      this.#options.onTools(this.tools());
    } catch (err) {
      // A lost connection is reported by the close handler; anything else is worth showing.
      if (generation === this.#generation && this.#state === "connected") {
        this.#lastError = `refreshing the tool list failed: ${messageOf(err)}`;
        this.#emit();
      }
    }
  }

  /** The session ended on its own: report it; the next call reconnects (with backoff if it keeps dying). */
  #lost(generation: number, reason: string): void {
    if (generation !== this.#generation || this.#state === "closed") return;
    this.#generation++;
    this.#session = undefined;
    const stderr = this.#stderr.summary();
    this.#lastError = stderr ? `${reason}; stderr: ${stderr}` : reason;
    this.#state = "failed";
    const healthy = Date.now() - this.#connectedAt >= HEALTHY_UPTIME_MS;
    this.#failures = healthy ? 0 : this.#failures + 1;
    this.#retryAt = Date.now() + backoffMs(this.#failures - 1);
    this.#emit();
  }

  async #dropSession(reason: string): Promise<void> {
    const session = this.#session;
    this.#generation++;
    this.#session = undefined;
    this.#state = "failed";
    this.#lastError = reason;
    this.#retryAt = 0;
    this.#emit();
    await session?.close();
  }

  #fail(reason: string, withStderr: boolean): false {
    const stderr = withStderr ? this.#stderr.summary() : "";
    this.#lastError = stderr && !reason.includes(stderr) ? `${reason}; stderr: ${stderr}` : reason;
    this.#state = "failed";
    this.#failures++;
    this.#retryAt = Date.now() + backoffMs(this.#failures);
    this.#emit();
    return false;
  }

  #callError(tool: string, err: unknown, options: CallOptions): DimsumError {
    const server = this.config.name;
    if (err instanceof SdkError && err.code === SdkErrorCode.RequestTimeout) {
      const limit = options.timeoutMs ?? this.config.timeoutMs;
      return new DimsumError(
        "timeout",
        `MCP server "${server}" did not answer \`${tool}\` in time${limit ? ` (${formatMs(limit)})` : ""}.`,
        {
          hint: `raise "timeout" for "${server}" in mcp.json if the tool is slow`,
          cause: err,
        },
      );
    }
    if (isConnectionError(err) && this.#state !== "connected") {
      return this.#unavailable(this.#lastError ?? messageOf(err), err);
    }
    if (err instanceof DimsumError) return err;
    if (err instanceof UnauthorizedError) {
      return new DimsumError(
        "unauthenticated",
        `MCP server "${server}" refused \`${tool}\`: the sign-in is not valid for it.`,
        {
          hint: this.#options.auth?.signInHint?.(server) ?? `run \`dimsum mcp login ${server}\``,
          cause: err,
        },
      );
    }
    return new DimsumError("tool_failed", `MCP server "${server}" rejected \`${tool}\`: ${messageOf(err)}`, {
      cause: err,
    });
  }

  #unavailable(reason: string, cause?: unknown): DimsumError {
    return new DimsumError("tool_failed", `MCP server "${this.config.name}" is unavailable: ${reason}`, {
      hint: `check it with \`dimsum mcp list\`; its entry is in ${this.config.source}`,
      ...(cause === undefined ? {} : { cause }),
    });
  }

  #emit(): void {
    this.#options.onStatus(this.status());
  }
}

/** The session ended before it could sign in. */
function needsLogin(err: unknown): boolean {
  return err instanceof UnauthorizedError || (err instanceof DimsumError && err.code === "unauthenticated");
}

/** The call's result with the client's own notes (e.g. a declined elicitation) appended as text. */
function withNotes(result: McpCallResult, notes: string[]): McpCallResult {
  if (notes.length === 0) return result;
  const content = Array.isArray(result.content) ? result.content : [];
  return {
    ...result,
    content: [...content, ...notes.map((note) => ({ type: "text", text: `[dimsum] ${note}` }))],
  };
}

/** 0 for the first retry, then 1 s, 2 s, 4 s ... up to 30 s. */
function backoffMs(failures: number): number {
  if (failures <= 0) return 0;
  return Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (failures - 1));
}
