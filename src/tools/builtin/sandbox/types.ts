/** Shapes shared by the shell sandbox modules. */

/** Limits applied to every sandboxed command (and, where the kernel allows, to unsandboxed ones). */
export interface SandboxLimits {
  /** Processes and threads the command tree may have at once (pids cgroup; `ulimit -p` without one). */
  processes: number;
  /** Memory of the whole tree in bytes (memory cgroup; `ulimit -v` per process without one). */
  memoryBytes: number;
  /** CPU seconds per process (`ulimit -t`). */
  cpuSeconds: number;
  /** Largest file a process may write, in bytes (`ulimit -f`). */
  fileBytes: number;
  /** Output (stdout + stderr) after which the command is killed as a flood. */
  floodBytes: number;
}

/** How `execute_command` confines commands, resolved from the configuration. */
export interface ShellSandboxConfig {
  /** Path of bubblewrap. A path that does not exist means: no sandbox on this machine. */
  bwrapPath: string;
  /** Give commands the host's network (off by default: only a private loopback). */
  network: boolean;
  /**
   * The network of an agent or CLI run through the allow-list proxy (see sandbox-network.ts):
   * `off` (default), `allow` some hosts, or `on` (every public host). `network: true` overrides it.
   */
  networkPolicy?: NetworkPolicy;
  /** Team agents (ids) whose commands get the network even when `network` is off. */
  networkAgents: string[];
  /** The environment commands get, already resolved from the allow list (PATH, LANG, TERM, named ones). */
  env: Record<string, string>;
  /** Absolute paths never shown to commands (DIMSUM_HOME, the user's home, `.env`, the config file, …). */
  hidePaths: string[];
  /** Run commands without a sandbox when none works (the team server offers the shell only then). */
  allowUnsandboxed: boolean;
  limits: SandboxLimits;
}

/** Whether the sandbox works on this machine, and if not, why. */
export interface SandboxStatus {
  available: boolean;
  /** What failed and how to fix it; set when not available. */
  reason?: string;
}

/** What a sandbox may reach beyond its own loopback (through the allow-list proxy). */
export type NetworkPolicy = { mode: "off" } | { mode: "on" } | { mode: "allow"; hosts: string[] };
