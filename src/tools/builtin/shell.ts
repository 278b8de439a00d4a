/** execute_command: runs a shell command inside the workspace under the shell policy. */
import { spawn } from "node:child_process";
import { stat } from "node:fs/promises";
import * as z from "zod";
import { DimsumError } from "../../errors.js";
import { type ApprovalNeed, defineTool, type ToolContext, type ToolResult, type ZodTool } from "../types.js";
import { requestNetworkTool } from "./request-network.js";
import type { CommandCgroup } from "./sandbox/cgroup.js";
import { detectSandbox, type LaunchPlan, planLaunch, type SandboxStatus } from "./sandbox/index.js";
import { sandboxWithGrants } from "./sandbox/network-grants.js";
import { openSandboxNetwork } from "./sandbox/sandbox-network.js";
import { evaluateCommand, type PolicyVerdict } from "./shell-policy.js";
import { errorResult, toolFailure } from "./tool-error.js";
import { resolveInWorkspace } from "./workspace-path.js";

// Time a command gets to clean up after SIGTERM before the whole group is killed.
const KILL_GRACE_MS = 2000;
// After the shell exits, how long to wait for its pipes to close; background jobs may hold them open.
const DRAIN_MS = 1000;

/** Process groups that may still have members; killed outright if Dimsum exits before their SIGKILL. */
const lingeringGroups = new Map<number, CommandCgroup | undefined>();
let exitHookInstalled = false;

function signalGroup(pgid: number, sig: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, sig);
    return true;
  } catch {
    return false; // The group is already gone.
  }
}

/**
 * Ends whatever is left of a command's process group: SIGTERM now, SIGKILL after the grace period
 * (or at once when Dimsum exits first). Background jobs (`cmd &`) do not outlive their command.
 */
function endProcessGroup(pgid: number, cgroup: CommandCgroup | undefined): void {
  if (!signalGroup(pgid, 0)) {
    // The sandbox's PID namespace already ended with its shell; only the cgroup is left to remove.
    cgroup?.kill();
    cgroup?.remove();
    return;
  }
  signalGroup(pgid, "SIGTERM");
  if (lingeringGroups.has(pgid)) return;
  lingeringGroups.set(pgid, cgroup);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once("exit", () => {
      for (const [group, members] of lingeringGroups) {
        signalGroup(group, "SIGKILL");
        members?.kill();
      }
    });
  }
  setTimeout(() => {
    lingeringGroups.delete(pgid);
    signalGroup(pgid, "SIGKILL");
    cgroup?.kill();
    cgroup?.remove();
  }, KILL_GRACE_MS).unref();
}

/** Keeps the first and last halves of a stream within a byte limit and counts what was cut. */
export class OutputCapture {
  readonly #headLimit: number;
  readonly #tailLimit: number;
  readonly #head: Buffer[] = [];
  readonly #tail: Buffer[] = [];
  #headBytes = 0;
  #tailBytes = 0;
  #total = 0;

  constructor(limit: number) {
    this.#headLimit = Math.floor(limit / 2);
    this.#tailLimit = limit - this.#headLimit;
  }

  /** Bytes seen so far, kept or not. */
  get totalBytes(): number {
    return this.#total;
  }

  /** Adds a chunk, dropping middle bytes once the limit is reached. */
  push(chunk: Buffer): void {
    this.#total += chunk.length;
    let rest = chunk;
    if (this.#headBytes < this.#headLimit) {
      const take = Math.min(rest.length, this.#headLimit - this.#headBytes);
      this.#head.push(rest.subarray(0, take));
      this.#headBytes += take;
      rest = rest.subarray(take);
    }
    if (rest.length === 0) return;
    this.#tail.push(rest);
    this.#tailBytes += rest.length;
    while (this.#tail.length > 1 && this.#tailBytes - (this.#tail[0] as Buffer).length >= this.#tailLimit) {
      this.#tailBytes -= (this.#tail.shift() as Buffer).length;
    }
  }

  /** The kept text, with a marker where bytes were cut, and how many bytes were cut. */
  result(): { text: string; cutBytes: number } {
    const head = Buffer.concat(this.#head);
    let tail = Buffer.concat(this.#tail);
    if (tail.length > this.#tailLimit) tail = tail.subarray(tail.length - this.#tailLimit);
    const cutBytes = this.#total - head.length - tail.length;
    if (cutBytes === 0) return { text: Buffer.concat([head, tail]).toString("utf8"), cutBytes };
    const marker = `\n… [${cutBytes} bytes of output cut from the middle; ${this.#total} bytes in all] …\n`;
    return { text: head.toString("utf8") + marker + tail.toString("utf8"), cutBytes };
  }
}

export interface CommandOutcome {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** True when the command was killed for writing more than the flood limit. */
  flooded: boolean;
  stdout: string;
  stderr: string;
  cutBytes: number;
  /** True when background processes kept the output pipes open after the shell exited. */
  pipesLeftOpen: boolean;
}

export interface RunOptions {
  timeoutMs: number;
  maxOutputBytes: number;
  /** Output (both streams) after which the whole tree is killed. */
  floodBytes: number;
  signal: AbortSignal;
}

/**
 * Runs a launch plan (the sandboxed or plain shell, see sandbox/launch.ts) in its own process group,
 * so a timeout, an abort, an output flood or the end of the command stops everything it started,
 * background jobs included; the command's cgroup (when there is one) is emptied and removed at the
 * end. Never rejects for a failing command; only for a spawn failure.
 */
export function runShellCommand(plan: LaunchPlan, options: RunOptions): Promise<CommandOutcome> {
  return new Promise((resolve, reject) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(plan.file, plan.args, {
        cwd: plan.cwd,
        env: plan.env,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
    } catch (err) {
      plan.cgroup?.remove();
      reject(err);
      return;
    }
    const stdoutPipe = child.stdout as NonNullable<typeof child.stdout>;
    const stderrPipe = child.stderr as NonNullable<typeof child.stderr>;
    const stdout = new OutputCapture(options.maxOutputBytes);
    const stderr = new OutputCapture(options.maxOutputBytes);

    let stopping: "timeout" | "abort" | "flood" | undefined;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let settled = false;
    const stop = (why: "timeout" | "abort" | "flood") => {
      if (stopping || exit) return;
      stopping = why;
      if (why === "flood") {
        if (child.pid !== undefined) signalGroup(child.pid, "SIGKILL");
        plan.cgroup?.kill();
        return;
      }
      if (child.pid !== undefined) endProcessGroup(child.pid, plan.cgroup);
    };
    const onData = (capture: OutputCapture) => (chunk: Buffer) => {
      capture.push(chunk);
      if (stdout.totalBytes + stderr.totalBytes > options.floodBytes) stop("flood");
    };
    stdoutPipe.on("data", onData(stdout));
    stderrPipe.on("data", onData(stderr));
    const timer = setTimeout(() => stop("timeout"), options.timeoutMs);
    const onAbort = () => stop("abort");
    options.signal.addEventListener("abort", onAbort, { once: true });
    let drainTimer: NodeJS.Timeout | undefined;

    const cleanUp = () => {
      clearTimeout(timer);
      clearTimeout(drainTimer);
      options.signal.removeEventListener("abort", onAbort);
      // Whatever is left of the tree ends with the command.
      if (child.pid !== undefined) endProcessGroup(child.pid, plan.cgroup);
      else plan.cgroup?.remove();
    };

    const finish = (pipesLeftOpen: boolean) => {
      if (settled) return;
      settled = true;
      cleanUp();
      if (pipesLeftOpen) {
        stdoutPipe.destroy();
        stderrPipe.destroy();
      }
      const out = stdout.result();
      const err = stderr.result();
      resolve({
        exitCode: exit?.code ?? null,
        signal: exit?.signal ?? null,
        timedOut: stopping === "timeout",
        aborted: stopping === "abort",
        flooded: stopping === "flood",
        stdout: out.text,
        stderr: err.text,
        cutBytes: out.cutBytes + err.cutBytes,
        pipesLeftOpen,
      });
    };

    child.on("error", (err) => {
      if (settled) return;
      settled = true;
      cleanUp();
      reject(err);
    });
    child.on("exit", (code, signal) => {
      exit = { code, signal };
      drainTimer = setTimeout(() => finish(true), DRAIN_MS);
    });
    child.on("close", () => finish(false));
    if (options.signal.aborted) stop("abort");
  });
}

/** The text the model sees: what happened, then both streams, labelled. */
interface OutcomeContext {
  timeoutMs: number;
  floodBytes: number;
  plan: Pick<LaunchPlan, "sandboxed" | "processLimit">;
}

function formatOutcome(outcome: CommandOutcome, { timeoutMs, floodBytes, plan }: OutcomeContext): ToolResult {
  const lines: string[] = [];
  if (outcome.flooded) {
    lines.push(
      `Command was stopped: it wrote more than ${floodBytes} bytes of output; it and its child processes were killed.`,
    );
  } else if (outcome.timedOut) {
    lines.push(`Command timed out after ${timeoutMs / 1000} s; it and its child processes were stopped.`);
  } else if (outcome.aborted) {
    lines.push("Command was aborted; it and its child processes were stopped.");
  } else if (outcome.signal) {
    lines.push(`Command was killed by signal ${outcome.signal}.`);
  } else {
    lines.push(`exit code ${outcome.exitCode}`);
  }
  lines.push("[stdout]", outcome.stdout === "" ? "(empty)" : outcome.stdout.replace(/\n$/, ""));
  lines.push("[stderr]", outcome.stderr === "" ? "(empty)" : outcome.stderr.replace(/\n$/, ""));
  if (outcome.pipesLeftOpen) {
    lines.push("[background processes were still running when the command ended; they were stopped]");
  }
  const failed = outcome.flooded || outcome.timedOut || outcome.aborted || outcome.exitCode !== 0;
  const data = {
    exitCode: outcome.exitCode,
    signal: outcome.signal,
    timedOut: outcome.timedOut,
    aborted: outcome.aborted,
    flooded: outcome.flooded,
    cutBytes: outcome.cutBytes,
    sandboxed: plan.sandboxed,
    processLimit: plan.processLimit,
  };
  return failed ? { content: lines.join("\n"), isError: true, data } : { content: lines.join("\n"), data };
}

/** The shell policy's verdict on a command, made stricter when no sandbox confines it. */
export function policyVerdict(command: string, ctx: ToolContext, sandbox: SandboxStatus): PolicyVerdict {
  const verdict = evaluateCommand(command, ctx.config.shell);
  if (!sandbox.available && !ctx.config.shell.sandbox.allowUnsandboxed && verdict.decision !== "deny") {
    // Without a sandbox every command runs with Dimsum's own rights: a person decides each time.
    const why = `no sandbox is available (${sandbox.reason ?? "unknown"}), so it would run with your full rights`;
    return {
      decision: "confirm",
      reason: verdict.decision === "confirm" ? `${verdict.reason}, and ${why}` : why,
    };
  }
  return verdict;
}

/** The approval a command needs under the shell policy (execute_command, process_start); undefined: none. */
export async function commandApproval(command: string, ctx: ToolContext): Promise<ApprovalNeed | undefined> {
  const sandbox = await detectSandbox(ctx.config.shell.sandbox.bwrapPath);
  const verdict = policyVerdict(command, ctx, sandbox);
  if (verdict.decision !== "confirm") return undefined;
  return { summary: command, reason: verdict.reason, unattendedHint: unattendedHint(sandbox) };
}

export function unattendedHint(sandbox: SandboxStatus): string {
  return sandbox.available
    ? "rerun with --yes to allow such commands, or adjust tools.shell (allow/confirm) in the configuration"
    : "install bubblewrap (apt-get install bubblewrap), or rerun with --yes, or set tools.shell.allowUnsandboxed";
}

/** Applies the shell policy; returns a refusal result, or undefined when the command may run. */
export async function checkPolicy(
  command: string,
  ctx: ToolContext,
  sandbox: SandboxStatus,
  tool = "execute_command",
): Promise<ToolResult | undefined> {
  const verdict = policyVerdict(command, ctx, sandbox);
  if (verdict.decision === "allow") return undefined;
  if (verdict.decision === "deny") {
    return errorResult(
      toolFailure(
        `Refused to run \`${command}\`: ${verdict.reason}.`,
        "this rule is always enforced; find another way or ask the user to run it themselves",
      ),
    );
  }
  // The loop's approval phase asked already and gives approved calls an `approve` that says yes.
  if (!ctx.approve) {
    return errorResult(
      toolFailure(
        `\`${command}\` needs approval because ${verdict.reason}, and nobody can approve it in this run.`,
        unattendedHint(sandbox),
      ),
    );
  }
  const approved = await ctx.approve({ tool, summary: command, reason: verdict.reason });
  if (approved) return undefined;
  return errorResult(
    toolFailure(`The user declined to run \`${command}\`.`, "do not retry it; ask the user how to proceed"),
  );
}

const executeCommandParams = z.object({
  command: z.string().min(1).describe("Shell command line, run with /bin/sh -c"),
  workingDirectory: z
    .string()
    .default(".")
    .describe("Folder to run in, relative to the workspace (default: the workspace)"),
  timeoutSeconds: z
    .number()
    .positive()
    .optional()
    .describe("Stop the command after this many seconds (capped by the configured limit)"),
});

/** execute_command: a shell command in the workspace, with policy checks, a timeout and an output cap. */
export const executeCommandTool: ZodTool = defineTool({
  name: "execute_command",
  description:
    "Run a shell command (/bin/sh -c) in the workspace and return its exit code, stdout and stderr. " +
    "It runs in a sandbox: only the workspace is writable, there is no network unless configured, and " +
    "background processes end with the command. No input is available to it; long output is cut in the middle. " +
    "Risky commands may need approval.",
  parameters: executeCommandParams,
  concurrencySafe: false,
  needsApproval: (args, ctx) => commandApproval(args.command, ctx),
  // The command's own policy timeout governs; this only keeps a shorter registry default from cutting in.
  timeoutMs: 24 * 60 * 60 * 1000,
  async execute(args, ctx) {
    try {
      if (ctx.signal.aborted)
        throw new DimsumError("aborted", "The run was aborted before the command started.");
      const sandbox = await detectSandbox(ctx.config.shell.sandbox.bwrapPath);
      const refusal = await checkPolicy(args.command, ctx, sandbox);
      if (refusal) return refusal;
      const cwd = await resolveInWorkspace(ctx.workspace, args.workingDirectory);
      const info = await stat(cwd).catch(() => undefined);
      if (!info?.isDirectory()) {
        throw toolFailure(
          `workingDirectory ${args.workingDirectory} is not a folder in the workspace.`,
          "use an existing folder, relative to the workspace",
        );
      }
      const policy = ctx.config.shell;
      const timeoutMs = Math.min(
        args.timeoutSeconds ? args.timeoutSeconds * 1000 : policy.timeoutMs,
        policy.timeoutMs,
      );
      // An agent's `allow`/`on` network goes through the allow-list proxy, for this command only.
      const network = sandbox.available
        ? await openSandboxNetwork(sandboxWithGrants(policy.sandbox, ctx.networkGrants), {
            ports: false,
            allowPrivate: ctx.config.fetch.allowPrivateNetwork,
          })
        : undefined;
      try {
        const plan = planLaunch({
          command: args.command,
          workspace: ctx.workspace,
          cwd,
          sandbox: policy.sandbox,
          sandboxed: sandbox.available,
          ...(network ? { bridge: network.bridge } : {}),
        });
        const floodBytes = policy.sandbox.limits.floodBytes;
        const outcome = await runShellCommand(plan, {
          timeoutMs,
          maxOutputBytes: policy.maxOutputBytes,
          floodBytes,
          signal: ctx.signal,
        });
        return formatOutcome(outcome, { timeoutMs, floodBytes, plan });
      } finally {
        await network?.close();
      }
    } catch (err) {
      return errorResult(err);
    }
  },
});

/** The shell tool, as a list for symmetry with the other built-in groups. */
export const builtinShellTools: ZodTool[] = [executeCommandTool, requestNetworkTool];
