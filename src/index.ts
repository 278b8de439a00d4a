/**
 * Dimsum's public library API: the runtime only. The scripted fake servers for tests are
 * `dimsum/testing`; SQLite, yaml, pdfjs and the MCP SDK load when first used.
 */

export type {
  ApprovalAnswer,
  ApprovalDecision,
  Approver,
  PendingApproval,
} from "./agent/approvals.js";
export type { RunCheckpoint } from "./agent/checkpoint.js";
export type { AgentEvent, AgentEventType } from "./agent/events.js";
export type { ContextLayers } from "./agent/layered-context.js";
export { buildLayeredContext } from "./agent/layered-context.js";
export {
  type ContextBuilder,
  type ContextRequest,
  type RunAgentOptions,
  runAgent,
  type ToolEnvironment,
} from "./agent/run-agent.js";
export { compactSession, runSessionTurn, type SessionTurnOptions } from "./agent/session-runner.js";
export { SteeringQueue, type SteeringSource } from "./agent/steering.js";
export { type DimsumConfig, type LoadConfigOptions, loadConfig } from "./config/load-config.js";
export { parseModelString, resolveModel } from "./config/resolve-model.js";
export { DimsumError, type ErrorCode, toDimsumError } from "./errors.js";
export { stream, streamFunctionFor } from "./llm/providers.js";
export type * from "./llm/types.js";
export { openDatabase } from "./store/database.js";
export { SqliteSessionStore } from "./store/sqlite-session-store.js";
export type { SessionRef, SessionStore } from "./store/types.js";
export { builtinTools, createBuiltinRegistry } from "./tools/builtin/index.js";
export { memoryTodoStore } from "./tools/memory-todo-store.js";
export { ToolRegistry } from "./tools/registry.js";
export type { Tool, ToolContext, ToolResult } from "./tools/types.js";
export { defineTool } from "./tools/types.js";
