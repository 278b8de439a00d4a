/** Shapes of the session processes (long-running commands the model starts, reads and stops). */

/** Limits and lifetimes of session processes (`tools.processes` in the configuration). */
export interface ProcessSettings {
  /** Processes one session may run at once. */
  perSession: number;
  /** Processes the whole server (or CLI) may run at once. */
  perServer: number;
  /** A process nobody read, wrote or previewed for this long is stopped. */
  idleMs: number;
  /** A process is stopped this long after it started, whatever it does. */
  maxLifetimeMs: number;
  /** Output lines kept per process (older ones are dropped; the model is told how many). */
  bufferLines: number;
  /** The longest `process_read` waits for a pattern or a port. */
  maxWaitMs: number;
}

export const DEFAULT_PROCESS_SETTINGS: ProcessSettings = {
  perSession: 3,
  perServer: 20,
  idleMs: 30 * 60_000,
  maxLifetimeMs: 4 * 60 * 60_000,
  bufferLines: 2000,
  maxWaitMs: 120_000,
};

export type ProcessState = "running" | "exited" | "stopped";

/** One process as listed to the model, the chat header and the API. */
export interface ProcessInfo {
  name: string;
  command: string;
  /** Working directory, relative to the workspace. */
  cwd: string;
  state: ProcessState;
  startedAt: number;
  endedAt?: number;
  exitCode?: number | null;
  signal?: string | null;
  /** Why Dimsum stopped it (asked, idle, lifetime, session closed, server stopping). */
  stopReason?: string;
  /** Ports found listening inside its sandbox (when it has a bridge). */
  ports: number[];
  /** Whether its ports can be reached from Dimsum (sandboxed, with a bridge). */
  previewable: boolean;
}

/** One output line. */
export interface OutputLine {
  seq: number;
  stream: "stdout" | "stderr";
  text: string;
}
