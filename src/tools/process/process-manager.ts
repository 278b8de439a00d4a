/**
 * The session processes of one server (or CLI): started by the model with `process_start`, kept per
 * session (a chat, a CLI session), counted against a per-session and a per-server limit, and
 * stopped when asked, when idle for too long, at their maximum lifetime, when their session is
 * closed or archived, and when the server stops. Each is written down in the pid registry so a
 * server killed outright ends them at its next start (bubblewrap's --die-with-parent usually has).
 */
import type { Socket } from "node:net";
import { connectThroughBridge } from "../builtin/sandbox/bridge.js";
import { planLaunch } from "../builtin/sandbox/launch.js";
import { openSandboxNetwork } from "../builtin/sandbox/sandbox-network.js";
import type { ToolsConfig } from "../types.js";
import { ManagedProcess } from "./managed-process.js";
import { PidRegistry } from "./pid-registry.js";
import type { ProcessInfo, ProcessSettings } from "./types.js";

/** Ended processes kept per session, so their last output can still be read. */
const KEEP_ENDED = 10;

export interface ProcessManagerOptions {
  settings: ProcessSettings;
  /** Folder of the pid registry (e.g. `<home>/run/processes`); none: nothing is written down. */
  registryDir?: string;
  now?: () => number;
  /** Told when a session's processes change (started, ended), e.g. to refresh the chat header. */
  onChange?: (sessionKey: string) => void;
  /** How often idle and overdue processes are looked for (default 10 s). */
  checkEveryMs?: number;
}

export interface StartRequest {
  name: string;
  command: string;
  /** Working directory as given (relative to the workspace). */
  cwd: string;
  /** Its absolute path, already checked to be inside the workspace. */
  absoluteCwd: string;
  workspace: string;
  tools: ToolsConfig;
  /** Whether bubblewrap works here. */
  sandboxed: boolean;
}

/** Refused by a limit or a name in use; the message says what to do. */
export class ProcessRefusal extends Error {}

export class ProcessManager {
  readonly #settings: ProcessSettings;
  readonly #registry: PidRegistry | undefined;
  readonly #now: () => number;
  readonly #onChange: ((key: string) => void) | undefined;
  readonly #sessions = new Map<string, Map<string, ManagedProcess>>();
  readonly #timer: NodeJS.Timeout;
  #closed = false;

  constructor(options: ProcessManagerOptions) {
    this.#settings = options.settings;
    this.#registry = options.registryDir ? new PidRegistry(options.registryDir) : undefined;
    this.#now = options.now ?? Date.now;
    this.#onChange = options.onChange;
    this.#timer = setInterval(() => this.#check(), options.checkEveryMs ?? 10_000);
    this.#timer.unref();
  }

  get settings(): ProcessSettings {
    return this.#settings;
  }

  /** Ends process groups a previous Dimsum on this home left running; returns how many. */
  sweepOrphans(): number {
    return this.#registry?.sweep() ?? 0;
  }

  /** Processes running now, across every session. */
  runningCount(): number {
    let count = 0;
    for (const procs of this.#sessions.values()) for (const p of procs.values()) if (p.running) count++;
    return count;
  }

  /** Starts a named process in the session's sandbox. */
  async start(sessionKey: string, request: StartRequest): Promise<ManagedProcess> {
    if (this.#closed) throw new ProcessRefusal("The server is stopping; no process can start now.");
    const procs = this.#sessions.get(sessionKey) ?? new Map<string, ManagedProcess>();
    const existing = procs.get(request.name);
    if (existing?.running) {
      throw new ProcessRefusal(
        `A process named "${request.name}" is already running in this session; stop it first or choose another name.`,
      );
    }
    const mine = [...procs.values()].filter((p) => p.running).length;
    if (mine >= this.#settings.perSession) {
      throw new ProcessRefusal(
        `This session already runs ${mine} processes, its limit (tools.processes.perSession = ${this.#settings.perSession}); stop one with process_stop first.`,
      );
    }
    if (this.runningCount() >= this.#settings.perServer) {
      throw new ProcessRefusal(
        `The server already runs ${this.runningCount()} processes, its limit (tools.processes.perServer = ${this.#settings.perServer}); try again later.`,
      );
    }
    const network = request.sandboxed
      ? await openSandboxNetwork(request.tools.shell.sandbox, {
          ports: true,
          allowPrivate: request.tools.fetch.allowPrivateNetwork,
        })
      : undefined;
    let proc: ManagedProcess;
    try {
      const plan = planLaunch({
        command: request.command,
        workspace: request.workspace,
        cwd: request.absoluteCwd,
        sandbox: request.tools.shell.sandbox,
        sandboxed: request.sandboxed,
        ...(network ? { bridge: network.bridge } : {}),
      });
      proc = new ManagedProcess({
        name: request.name,
        command: request.command,
        cwd: request.cwd,
        plan,
        network,
        bufferLines: this.#settings.bufferLines,
        now: this.#now,
        onEnded: (ended) => {
          if (ended.pid !== undefined) this.#registry?.remove(ended.pid);
          this.#onChange?.(sessionKey);
        },
      });
    } catch (err) {
      await network?.close();
      throw err;
    }
    if (proc.pid !== undefined) this.#registry?.add(proc.pid, request.command);
    procs.set(request.name, proc);
    this.#sessions.set(sessionKey, procs);
    this.#trimEnded(procs);
    this.#onChange?.(sessionKey);
    return proc;
  }

  get(sessionKey: string, name: string): ManagedProcess | undefined {
    return this.#sessions.get(sessionKey)?.get(name);
  }

  list(sessionKey: string): ProcessInfo[] {
    return [...(this.#sessions.get(sessionKey)?.values() ?? [])].map((p) => p.info());
  }

  /** Stops one process; false when the session has none of that name. */
  async stop(sessionKey: string, name: string, reason = "stopped on request"): Promise<boolean> {
    const proc = this.get(sessionKey, name);
    if (!proc) return false;
    await proc.stop(reason);
    return true;
  }

  /** Stops every process of a session (closed, archived, deleted) and forgets them. */
  async stopSession(sessionKey: string, reason: string): Promise<void> {
    const procs = this.#sessions.get(sessionKey);
    if (!procs) return;
    await Promise.all([...procs.values()].map((p) => p.stop(reason)));
    this.#sessions.delete(sessionKey);
    this.#onChange?.(sessionKey);
  }

  /** Stops everything (the server is stopping); no process starts afterwards. */
  async closeAll(reason = "the server stopped"): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    await Promise.all([...this.#sessions.keys()].map((key) => this.stopSession(key, reason)));
  }

  /**
   * Connects to `port` inside a running process's sandbox (previews, the browser); undefined when
   * the session has no such process, it has no bridge, or nothing listens there.
   */
  async connect(sessionKey: string, name: string, port: number): Promise<Socket | undefined> {
    const proc = this.get(sessionKey, name);
    const dir = proc?.running ? proc.bridgeDir : undefined;
    if (!proc || dir === undefined) return undefined;
    proc.lastUsed = this.#now();
    return connectThroughBridge(dir, port);
  }

  /** The session's running process listening on `port`, if any (the browser's way in). */
  ownerOfPort(sessionKey: string, port: number): ManagedProcess | undefined {
    for (const proc of this.#sessions.get(sessionKey)?.values() ?? []) {
      if (proc.running && proc.ports().includes(port)) return proc;
    }
    return undefined;
  }

  #check(): void {
    const now = this.#now();
    for (const procs of this.#sessions.values()) {
      for (const proc of procs.values()) {
        if (!proc.running) continue;
        if (now - proc.startedAt >= this.#settings.maxLifetimeMs) {
          void proc.stop(
            `it reached the maximum lifetime (${Math.round(this.#settings.maxLifetimeMs / 60_000)} min)`,
          );
        } else if (now - proc.lastUsed >= this.#settings.idleMs) {
          void proc.stop(`nobody used it for ${Math.round(this.#settings.idleMs / 60_000)} min`);
        }
      }
    }
  }

  #trimEnded(procs: Map<string, ManagedProcess>): void {
    const ended = [...procs.values()].filter((p) => !p.running);
    for (const proc of ended.slice(0, Math.max(0, ended.length - KEEP_ENDED))) procs.delete(proc.name);
  }
}

/** The processes of one session, as a run's tools see them. */
export interface SessionProcesses {
  manager: ProcessManager;
  /** The session: `chat:<channelId>` on the server, `cli:<sessionId>` in the CLI. */
  key: string;
}

/** The session key of a team chat's processes. */
export function chatProcessKey(channelId: string): string {
  return `chat:${channelId}`;
}
