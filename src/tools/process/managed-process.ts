/**
 * One session process: a launch plan (the same sandbox, limits and cgroup as `execute_command`)
 * spawned in its own process group with a pipe for input, its output kept as numbered lines, and a
 * read cursor so each read returns only what is new. Stopping ends the whole group (SIGTERM, then
 * SIGKILL), the cgroup, and the network bridge.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { portListening } from "../builtin/sandbox/bridge.js";
import type { LaunchPlan } from "../builtin/sandbox/launch.js";
import type { SandboxNetwork } from "../builtin/sandbox/sandbox-network.js";
import { listeningPorts } from "./listening-ports.js";
import type { OutputLine, ProcessInfo, ProcessState } from "./types.js";

const KILL_GRACE_MS = 2000;
const MAX_LINE_CHARS = 8000;
const PORT_POLL_MS = 250;

export interface ProcessSpec {
  name: string;
  command: string;
  /** Working directory relative to the workspace, as shown. */
  cwd: string;
  plan: LaunchPlan;
  network: SandboxNetwork | undefined;
  bufferLines: number;
  now: () => number;
  /** Called once the process has ended (exited or stopped) and is cleaned up. */
  onEnded: (proc: ManagedProcess) => void;
}

export interface ReadRequest {
  /** Wait until a new line matches this. */
  pattern?: RegExp;
  /** Wait until this port listens in the process's sandbox. */
  port?: number;
  waitMs: number;
  signal?: AbortSignal;
  /** Most lines returned (the newest are kept). */
  maxLines: number;
}

export interface ReadResult {
  lines: OutputLine[];
  /** New lines not returned: dropped from the buffer before this read, or over maxLines. */
  skipped: number;
  /** Whether the pattern matched / the port listens (undefined when not asked). */
  matched?: boolean;
  portOpen?: boolean;
  info: ProcessInfo;
}

export class ManagedProcess {
  readonly name: string;
  readonly command: string;
  readonly cwd: string;
  readonly startedAt: number;
  lastUsed: number;
  readonly #spec: ProcessSpec;
  readonly #child: ChildProcess;
  readonly #lines: OutputLine[] = [];
  #nextSeq = 1;
  #cursor = 1;
  #partial: Record<"stdout" | "stderr", string> = { stdout: "", stderr: "" };
  #state: ProcessState = "running";
  #endedAt: number | undefined;
  #exit: { code: number | null; signal: string | null } | undefined;
  #stopReason: string | undefined;
  #waiters = new Set<() => void>();
  #ended: Promise<void>;
  #cleaned = false;

  constructor(spec: ProcessSpec) {
    this.#spec = spec;
    this.name = spec.name;
    this.command = spec.command;
    this.cwd = spec.cwd;
    this.startedAt = spec.now();
    this.lastUsed = this.startedAt;
    const { plan } = spec;
    this.#child = spawn(plan.file, plan.args, {
      cwd: plan.cwd,
      env: plan.env,
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.#child.stdout?.on("data", (chunk: Buffer) => this.#take("stdout", chunk));
    this.#child.stderr?.on("data", (chunk: Buffer) => this.#take("stderr", chunk));
    this.#child.stdin?.on("error", () => {});
    this.#ended = new Promise((resolve) => {
      this.#child.once("error", (err) => {
        this.#push("stderr", `[could not start: ${err.message}]`);
        this.#finish(null, null);
        resolve();
      });
      // Output still in the pipes arrives before "close"; background jobs holding them get a second.
      this.#child.once("exit", (code, signal) => {
        const timer = setTimeout(() => {
          this.#finish(code, signal);
          resolve();
        }, 1000);
        this.#child.once("close", () => {
          clearTimeout(timer);
          this.#finish(code, signal);
          resolve();
        });
      });
    });
  }

  /** The group leader's pid (undefined when the spawn failed). */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  get running(): boolean {
    return this.#state === "running";
  }

  /** Resolves when the process has ended and been cleaned up. */
  get ended(): Promise<void> {
    return this.#ended;
  }

  /** The bridge folder reaching its sandbox's loopback, when it has one. */
  get bridgeDir(): string | undefined {
    return this.#spec.network?.bridge.dir;
  }

  info(): ProcessInfo {
    const info: ProcessInfo = {
      name: this.name,
      command: this.command,
      cwd: this.cwd,
      state: this.#state,
      startedAt: this.startedAt,
      ports: this.ports(),
      previewable: this.bridgeDir !== undefined,
    };
    if (this.#endedAt !== undefined) info.endedAt = this.#endedAt;
    if (this.#exit) {
      info.exitCode = this.#exit.code;
      info.signal = this.#exit.signal;
    }
    if (this.#stopReason) info.stopReason = this.#stopReason;
    return info;
  }

  /** Ports listening in its sandbox now (its own proxy's port left out). */
  ports(): number[] {
    const pid = this.#child.pid;
    if (!this.running || pid === undefined || this.bridgeDir === undefined) return [];
    const proxied = this.#spec.network?.bridge.proxy === true;
    return listeningPorts(pid).filter((p) => !(proxied && p === 3128));
  }

  /** The last `count` lines, whatever was read (the chat header's view). */
  tail(count: number): OutputLine[] {
    return this.#lines.slice(-count);
  }

  /** Lines after the read cursor (waiting for a pattern or a port first, when asked); moves the cursor. */
  async read(request: ReadRequest): Promise<ReadResult> {
    this.lastUsed = this.#spec.now();
    let matched: boolean | undefined;
    let portOpen: boolean | undefined;
    let upTo: number | undefined;
    if (request.pattern) {
      const pattern = request.pattern;
      const found = await this.#waitFor(() => {
        const hit = this.#lines.find((l) => l.seq >= this.#cursor && pattern.test(l.text));
        return hit?.seq;
      }, request);
      matched = found !== undefined;
      upTo = found;
    }
    if (request.port !== undefined) {
      portOpen = await this.#waitForPort(request.port, request);
    }
    const from = this.#cursor;
    const last = upTo ?? this.#nextSeq - 1;
    const fresh = this.#lines.filter((l) => l.seq >= from && l.seq <= last);
    const dropped = fresh.length > 0 ? (fresh[0] as OutputLine).seq - from : Math.max(0, last - from + 1);
    const lines = fresh.slice(-request.maxLines);
    this.#cursor = last + 1;
    this.lastUsed = this.#spec.now();
    return {
      lines,
      skipped: dropped + (fresh.length - lines.length),
      ...(matched !== undefined ? { matched } : {}),
      ...(portOpen !== undefined ? { portOpen } : {}),
      info: this.info(),
    };
  }

  /** Sends text to its standard input. */
  write(text: string): boolean {
    this.lastUsed = this.#spec.now();
    const stdin = this.#child.stdin;
    if (!this.running || !stdin || stdin.destroyed) return false;
    stdin.write(text);
    return true;
  }

  /** Ends the whole group: SIGTERM, SIGKILL after a grace period; resolves once it is gone. */
  async stop(reason: string): Promise<void> {
    if (!this.running) return this.#ended;
    this.#stopReason = reason;
    const pid = this.#child.pid;
    if (pid !== undefined) signalGroup(pid, "SIGTERM");
    const timer = setTimeout(() => {
      if (pid !== undefined) signalGroup(pid, "SIGKILL");
      this.#spec.plan.cgroup?.kill();
    }, KILL_GRACE_MS);
    await this.#ended;
    clearTimeout(timer);
  }

  async #waitFor<T>(check: () => T | undefined, request: ReadRequest): Promise<T | undefined> {
    const deadline = this.#spec.now() + request.waitMs;
    for (;;) {
      const value = check();
      if (value !== undefined || !this.running || request.signal?.aborted) return value;
      const left = deadline - this.#spec.now();
      if (left <= 0) return undefined;
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.#waiters.delete(wake);
          request.signal?.removeEventListener("abort", wake);
          resolve();
        };
        const timer = setTimeout(wake, left);
        this.#waiters.add(wake);
        request.signal?.addEventListener("abort", wake, { once: true });
      });
    }
  }

  async #waitForPort(port: number, request: ReadRequest): Promise<boolean> {
    const dir = this.bridgeDir;
    if (dir === undefined) return false;
    const deadline = this.#spec.now() + request.waitMs;
    for (;;) {
      if (await portListening(dir, port)) return true;
      if (!this.running || request.signal?.aborted || this.#spec.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, PORT_POLL_MS));
    }
  }

  #take(stream: "stdout" | "stderr", chunk: Buffer): void {
    const text = this.#partial[stream] + chunk.toString("utf8");
    const parts = text.split(/\r?\n/);
    let rest = parts.pop() ?? "";
    for (const line of parts) this.#push(stream, line);
    while (rest.length > MAX_LINE_CHARS) {
      this.#push(stream, rest.slice(0, MAX_LINE_CHARS));
      rest = rest.slice(MAX_LINE_CHARS);
    }
    this.#partial[stream] = rest;
    this.#wake();
  }

  #push(stream: "stdout" | "stderr", text: string): void {
    this.#lines.push({ seq: this.#nextSeq++, stream, text: text.slice(0, MAX_LINE_CHARS) });
    const over = this.#lines.length - this.#spec.bufferLines;
    if (over > 0) this.#lines.splice(0, over);
  }

  #wake(): void {
    for (const wake of [...this.#waiters]) wake();
  }

  #finish(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.#cleaned) return;
    this.#cleaned = true;
    for (const stream of ["stdout", "stderr"] as const) {
      if (this.#partial[stream] !== "") this.#push(stream, this.#partial[stream]);
      this.#partial[stream] = "";
    }
    this.#state = this.#stopReason ? "stopped" : "exited";
    this.#exit = { code, signal };
    this.#endedAt = this.#spec.now();
    // Whatever the command left behind in its group or cgroup ends with it.
    const pid = this.#child.pid;
    if (pid !== undefined) signalGroup(pid, "SIGKILL");
    this.#spec.plan.cgroup?.kill();
    this.#spec.plan.cgroup?.remove();
    this.#child.stdout?.destroy();
    this.#child.stderr?.destroy();
    this.#child.stdin?.destroy();
    void this.#spec.network?.close().catch(() => {});
    this.#wake();
    this.#spec.onEnded(this);
  }
}

function signalGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    // The group is gone.
  }
}
