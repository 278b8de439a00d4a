/** Session processes: long-running commands in the sandbox, their manager and the model's tools. */
export { ManagedProcess } from "./managed-process.js";
export {
  chatProcessKey,
  ProcessManager,
  ProcessRefusal,
  type SessionProcesses,
  type StartRequest,
} from "./process-manager.js";
export { PROCESS_TOOL_NAMES, processTools } from "./process-tools.js";
export { DEFAULT_PROCESS_SETTINGS, type ProcessInfo, type ProcessSettings } from "./types.js";
