/**
 * A tool is a name, a description, one parameter schema and `execute(args, ctx)`.
 * Our own tools use zod schemas; tools that arrive from outside (MCP, HTTP, plugins) use raw JSON Schema.
 */

import type { z } from "zod";
import type { ImagePart, JsonSchema, TextPart } from "../llm/types.js";
import type { SessionBrowser } from "./browser/browser-sessions.js";
import type { NetworkGrants } from "./builtin/sandbox/network-grants.js";
import type { ShellSandboxConfig } from "./builtin/sandbox/types.js";
import type { SessionProcesses } from "./process/process-manager.js";
import type { ProcessSettings } from "./process/types.js";

/** What the model sees back from a tool. */
export interface ToolResult {
  content: string | Array<TextPart | ImagePart>;
  isError?: boolean;
  /** Structured data kept for programs (UI, traces); not sent to the model. */
  data?: unknown;
  /** The call renders in an MCP App: the web chat shows its `ui://` resource with this result. */
  app?: ToolAppLink;
  /** A file the call put into the chat (a report, a chart): shown with the answer and sent to messengers. */
  file?: ToolFile;
}

/** A file a tool stored in the chat's attachments (its bytes at `/api/channels/:channel/attachments/:id`). */
export interface ToolFile {
  id: string;
  name: string;
  mimeType: string;
  kind: "image" | "pdf" | "text";
  size: number;
}

/** A tool result's link to the MCP App that shows it (MCP Apps, SEP-1865). */
export interface ToolAppLink {
  /** The MCP server (as configured) whose resource and tools the app uses. */
  server: string;
  /** The `ui://` resource the tool declared in `_meta.ui.resourceUri`. */
  resourceUri: string;
  /** The call's `structuredContent`, handed to the app with the result (left out when very large). */
  structuredContent?: unknown;
}

/** Where an MCP tool comes from, so its app's UI resource and sibling tools can be found. */
export interface McpToolLink {
  server: string;
  /** The tool's own name on its server (the registered name has the server in front). */
  tool: string;
  /** The `ui://` resource of the tool's app, when it has one. */
  uiResourceUri?: string;
  /** Only the app may call it (MCP Apps `visibility: ["app"]`): never offered to the model. */
  appOnly?: boolean;
  /** Reads a resource of the tool's server over the tool's own connection. */
  readResource(uri: string, signal?: AbortSignal): Promise<McpResourceContents>;
}

/** A `resources/read` result as far as Dimsum reads it. */
export interface McpResourceContents {
  contents: Array<{
    uri: string;
    mimeType?: string;
    text?: string;
    blob?: string;
    _meta?: Record<string, unknown>;
  }>;
}

export interface ApprovalRequest {
  tool: string;
  /** One line describing what will happen, e.g. the command line. */
  summary: string;
  reason: string;
  /** The tool call asking (absent when a tool asks on its own, outside the loop's approval phase). */
  callId?: string;
  /** The call's arguments, as validated. */
  args?: unknown;
}

/** Why a call needs a person's approval before it runs. */
export interface ApprovalNeed {
  /** One line describing what will happen, e.g. the command line. */
  summary: string;
  reason: string;
  /** What to do when nobody can approve (e.g. "rerun with --yes"). */
  unattendedHint?: string;
}

export interface TodoItem {
  id: number;
  text: string;
  status: "pending" | "in_progress" | "done";
}

/** Where the todo tool keeps its per-session list. Sessions (a later layer) persist it. */
export interface TodoStore {
  list(): TodoItem[] | Promise<TodoItem[]>;
  save(items: TodoItem[]): void | Promise<void>;
}

export interface ShellPolicy {
  /** Command names (first word) that run without asking. Empty means every non-denied command may run. */
  allow: string[];
  /** Regular expressions (source text) that are always refused. */
  deny: string[];
  /** Regular expressions that need approval (or `--yes`) before running. */
  confirm: string[];
  timeoutMs: number;
  maxOutputBytes: number;
  /** How commands are confined (bubblewrap, limits, environment allow list). */
  sandbox: ShellSandboxConfig;
}

export interface FetchPolicy {
  /** Allow loopback, private and link-local addresses (off by default). */
  allowPrivateNetwork: boolean;
  timeoutMs: number;
  maxBytes: number;
}

export interface ToolsConfig {
  shell: ShellPolicy;
  fetch: FetchPolicy;
  /** Limits of session processes (defaults when absent). */
  processes?: ProcessSettings;
}

export interface ToolContext {
  signal: AbortSignal;
  /** Absolute, real path of the run's workspace. File and shell tools stay inside it. */
  workspace: string;
  runId: string;
  userId?: string;
  sessionId?: string;
  todos: TodoStore;
  config: ToolsConfig;
  /** Asks the person at the keyboard. Absent when nobody can answer: then risky actions are refused. */
  approve?: (request: ApprovalRequest) => Promise<boolean>;
  /** Reports progress of a long tool call. */
  progress?: (message: string) => void;
  /** The session's long-running processes (process_* tools); absent where a run has no session. */
  processes?: SessionProcesses;
  /** The session's browser page (the browser tool); absent where a run has no session. */
  browser?: SessionBrowser;
  /** Hosts granted to this run through `request_network`; absent: no one can grant any. */
  networkGrants?: NetworkGrants;
  /**
   * Asks the person the run acts for to answer an outside server's request for input (MCP
   * elicitation). Absent when nobody is there to answer: then such requests are declined.
   */
  elicit?: ElicitPerson;
  /**
   * Asks the person the run acts for to approve an outside server's request to use the agent's
   * model (MCP sampling) and, approved, runs it. Absent when nobody is there: such requests are refused.
   */
  sample?: SamplePerson;
  /** The call is run again after a restart interrupted it (tools with `resumesAfterRestart`). */
  restarted?: boolean;
}

/** What a server asks the person (an MCP elicitation's params: message, mode, schema or URL). */
export type InputRequest = { message: string } & Record<string, unknown>;

/** The person's answer; `reason` says why it was not an answer (e.g. a timeout), for the trace. */
export interface InputAnswer {
  action: "accept" | "decline" | "cancel";
  content?: Record<string, string | number | boolean | string[]>;
  reason?: string;
}

export type ElicitPerson = (
  server: string,
  request: InputRequest,
  signal: AbortSignal,
) => Promise<InputAnswer>;

/** What a server asks the agent's model (an MCP sampling request's params). */
export type SamplingRequest = {
  messages: Array<{ role: "user" | "assistant"; content: unknown }>;
  maxTokens: number;
  systemPrompt?: string;
  temperature?: number;
} & Record<string, unknown>;

/** The completion the agent's model gave, as MCP's `sampling/createMessage` result. */
export type SamplingCompletion = {
  role: "assistant";
  content: { type: "text"; text: string };
  model: string;
  stopReason?: string;
};

/** Approved and served, or refused with the reason (for the trace). */
export type SamplingOutcome =
  | { approved: true; result: SamplingCompletion }
  | { approved: false; reason: string };

export type SamplePerson = (
  server: string,
  request: SamplingRequest,
  signal: AbortSignal,
) => Promise<SamplingOutcome>;

interface ToolBase {
  name: string;
  description: string;
  /** False when calls must not overlap with other calls in the same turn (default true). */
  concurrencySafe?: boolean;
  /** Per-call timeout; the registry default applies when absent. */
  timeoutMs?: number;
  /**
   * Safe to run again after a crash interrupted it (read-only tools); otherwise an interrupted call
   * is answered with a note that it may or may not have taken effect.
   */
  idempotent?: boolean;
  /**
   * After a crash interrupted it, run again with `restarted` set in its context: the tool goes on
   * with the work the interrupted call started (call_agent resumes its nested run), never starts it
   * afresh, and says it was interrupted when there is nothing to go on with.
   */
  resumesAfterRestart?: boolean;
}

/** A tool with a zod schema: arguments are parsed (with defaults applied) before `execute`. */
export interface ZodTool<S extends z.ZodType = z.ZodType> extends ToolBase {
  kind: "zod";
  parameters: S;
  execute(args: z.output<S>, ctx: ToolContext): Promise<ToolResult | string>;
  /** Whether this call needs a person's approval first (the loop asks before it runs). */
  needsApproval?(
    args: z.output<S>,
    ctx: ToolContext,
  ): ApprovalNeed | undefined | Promise<ApprovalNeed | undefined>;
}

/** A tool described by raw JSON Schema (MCP, HTTP, plugins); arguments are validated with it. */
export interface JsonSchemaTool extends ToolBase {
  kind: "json";
  parameters: JsonSchema;
  /** Set on MCP tools: their server and app. */
  mcp?: McpToolLink;
  execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult | string>;
  /** Whether this call needs a person's approval first (the loop asks before it runs). */
  needsApproval?(
    args: Record<string, unknown>,
    ctx: ToolContext,
  ): ApprovalNeed | undefined | Promise<ApprovalNeed | undefined>;
}

export type Tool = ZodTool | JsonSchemaTool;

/** Declares a zod-typed tool with its argument type inferred from the schema. */
export function defineTool<S extends z.ZodType>(tool: Omit<ZodTool<S>, "kind">): ZodTool {
  return { kind: "zod", ...tool } as unknown as ZodTool;
}
