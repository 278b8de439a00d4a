/**
 * The model's tools for session processes: process_start, process_read, process_write,
 * process_list and process_stop. A process runs like `execute_command` (same policy, approvals,
 * sandbox, limits and network policy) but outlives the call: a dev server, a watcher, a database.
 */
import { stat } from "node:fs/promises";
import * as z from "zod";
import { detectSandbox } from "../builtin/sandbox/index.js";
import { withGrantedNetwork } from "../builtin/sandbox/network-grants.js";
import { checkPolicy, commandApproval } from "../builtin/shell.js";
import { errorResult, toolFailure } from "../builtin/tool-error.js";
import { resolveInWorkspace } from "../builtin/workspace-path.js";
import { defineTool, type ToolContext, type ToolResult, type ZodTool } from "../types.js";
import type { ReadResult } from "./managed-process.js";
import { ProcessRefusal, type SessionProcesses } from "./process-manager.js";
import type { ProcessInfo } from "./types.js";

const NAME = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$/)
  .describe("The process's name in this session: letters, digits, _ . - (e.g. dev-server)");
const MAX_READ_LINES = 200;

function sessionOf(ctx: ToolContext): SessionProcesses {
  if (!ctx.processes) {
    throw toolFailure(
      "Long-running processes are not available in this run.",
      "use execute_command for commands that finish on their own",
    );
  }
  return ctx.processes;
}

function describe(info: ProcessInfo): string {
  const state =
    info.state === "running"
      ? "running"
      : info.state === "stopped"
        ? `stopped (${info.stopReason ?? "on request"})`
        : `exited with ${info.signal ? `signal ${info.signal}` : `code ${info.exitCode}`}`;
  const ports = info.ports.length > 0 ? `; listening on ${info.ports.join(", ")}` : "";
  return `${info.name}: ${state}${ports} — \`${info.command}\` in ${info.cwd}`;
}

function formatRead(name: string, result: ReadResult): ToolResult {
  const lines: string[] = [describe(result.info)];
  if (result.matched === false) lines.push("The pattern did not appear before the wait ended.");
  if (result.matched === true) lines.push("The pattern appeared (output up to that line).");
  if (result.portOpen === true) lines.push("The port is listening.");
  if (result.portOpen === false) lines.push("The port is not listening (yet).");
  if (result.skipped > 0) lines.push(`[${result.skipped} earlier new lines not shown]`);
  if (result.lines.length === 0) lines.push("(no new output)");
  for (const line of result.lines) lines.push(line.stream === "stderr" ? `[stderr] ${line.text}` : line.text);
  return {
    content: lines.join("\n"),
    data: { process: name, ...result, lines: result.lines.length },
    ...(result.matched === false || result.portOpen === false ? { isError: true } : {}),
  };
}

const startParams = z.object({
  name: NAME,
  command: z.string().min(1).describe("Shell command line, run with /bin/sh -c (e.g. npm run dev)"),
  workingDirectory: z.string().default(".").describe("Folder to run in, relative to the workspace"),
});

/** process_start: a named long-running command in the sandbox. */
export const processStartTool: ZodTool = defineTool({
  name: "process_start",
  description:
    "Start a long-running command (dev server, watcher, database) in the workspace's sandbox; it keeps " +
    "running after this call. Read its output with process_read (which can wait for a line or a port), " +
    "send input with process_write, stop it with process_stop. Same rules, limits and network as execute_command.",
  parameters: startParams,
  concurrencySafe: false,
  needsApproval: (args, ctx) => commandApproval(args.command, ctx),
  async execute(args, ctx) {
    try {
      const session = sessionOf(ctx);
      const sandbox = await detectSandbox(ctx.config.shell.sandbox.bwrapPath);
      const refusal = await checkPolicy(args.command, ctx, sandbox, "process_start");
      if (refusal) return refusal;
      const cwd = await resolveInWorkspace(ctx.workspace, args.workingDirectory);
      if (!(await stat(cwd).catch(() => undefined))?.isDirectory()) {
        throw toolFailure(
          `workingDirectory ${args.workingDirectory} is not a folder in the workspace.`,
          "use an existing folder, relative to the workspace",
        );
      }
      const proc = await session.manager.start(session.key, {
        name: args.name,
        command: args.command,
        cwd: args.workingDirectory,
        absoluteCwd: cwd,
        workspace: ctx.workspace,
        tools: withGrantedNetwork(ctx.config, ctx.networkGrants),
        sandboxed: sandbox.available,
      });
      return {
        content: `Started ${args.name}. Read its output with process_read (waitForPattern or waitForPort to wait until it is ready).`,
        data: proc.info(),
      };
    } catch (err) {
      return err instanceof ProcessRefusal ? errorResult(toolFailure(err.message, "")) : errorResult(err);
    }
  },
});

const readParams = z.object({
  name: NAME,
  waitForPattern: z
    .string()
    .max(500)
    .optional()
    .describe("Wait until a new output line matches this regular expression (e.g. 'ready in|Local:')"),
  waitForPort: z.number().int().min(1).max(65535).optional().describe("Wait until this port listens"),
  timeoutSeconds: z.number().positive().optional().describe("Longest wait (capped by the server's limit)"),
});

/** process_read: new output since the last read, optionally after waiting for a line or a port. */
export const processReadTool: ZodTool = defineTool({
  name: "process_read",
  description:
    "Read a process's new output since the last read. Optionally wait (up to timeoutSeconds) for a line " +
    "matching waitForPattern, or for waitForPort to listen.",
  parameters: readParams,
  timeoutMs: 24 * 60 * 60 * 1000,
  async execute(args, ctx) {
    try {
      const session = sessionOf(ctx);
      const proc = session.manager.get(session.key, args.name);
      if (!proc) throw unknownProcess(args.name);
      let pattern: RegExp | undefined;
      if (args.waitForPattern !== undefined) {
        try {
          pattern = new RegExp(args.waitForPattern);
        } catch {
          throw toolFailure(`waitForPattern is not a valid regular expression.`, "fix the expression");
        }
      }
      const max = session.manager.settings.maxWaitMs;
      const waitMs =
        pattern || args.waitForPort !== undefined
          ? Math.min(max, (args.timeoutSeconds ?? max / 1000) * 1000)
          : 0;
      const result = await proc.read({
        ...(pattern ? { pattern } : {}),
        ...(args.waitForPort !== undefined ? { port: args.waitForPort } : {}),
        waitMs,
        signal: ctx.signal,
        maxLines: MAX_READ_LINES,
      });
      return formatRead(args.name, result);
    } catch (err) {
      return errorResult(err);
    }
  },
});

const writeParams = z.object({
  name: NAME,
  input: z.string().describe("Text sent to the process's standard input"),
  newline: z.boolean().default(true).describe("Add a newline after the text (default true)"),
});

/** process_write: text to a process's standard input. */
export const processWriteTool: ZodTool = defineTool({
  name: "process_write",
  description:
    "Send text to a running process's standard input (a newline is added unless newline is false).",
  parameters: writeParams,
  concurrencySafe: false,
  async execute(args, ctx) {
    try {
      const session = sessionOf(ctx);
      const proc = session.manager.get(session.key, args.name);
      if (!proc) throw unknownProcess(args.name);
      if (!proc.write(args.newline ? `${args.input}\n` : args.input)) {
        throw toolFailure(`${args.name} is not running.`, "start it again with process_start");
      }
      return `Sent ${args.input.length} characters to ${args.name}.`;
    } catch (err) {
      return errorResult(err);
    }
  },
});

/** process_list: the session's processes. */
export const processListTool: ZodTool = defineTool({
  name: "process_list",
  description: "List this session's processes: name, state, command and listening ports.",
  parameters: z.object({}),
  idempotent: true,
  async execute(_args, ctx) {
    try {
      const session = sessionOf(ctx);
      const infos = session.manager.list(session.key);
      return {
        content: infos.length === 0 ? "No processes in this session." : infos.map(describe).join("\n"),
        data: infos,
      };
    } catch (err) {
      return errorResult(err);
    }
  },
});

/** process_stop: ends a process and everything it started. */
export const processStopTool: ZodTool = defineTool({
  name: "process_stop",
  description: "Stop a process of this session and everything it started.",
  parameters: z.object({ name: NAME }),
  concurrencySafe: false,
  async execute(args, ctx) {
    try {
      const session = sessionOf(ctx);
      if (!(await session.manager.stop(session.key, args.name))) throw unknownProcess(args.name);
      const proc = session.manager.get(session.key, args.name);
      return { content: `Stopped ${args.name}.`, ...(proc ? { data: proc.info() } : {}) };
    } catch (err) {
      return errorResult(err);
    }
  },
});

function unknownProcess(name: string) {
  return toolFailure(`This session has no process named "${name}".`, "see process_list for the names");
}

/** The process tools, in a stable order. */
export const processTools: ZodTool[] = [
  processStartTool,
  processReadTool,
  processWriteTool,
  processListTool,
  processStopTool,
];

/** Their names (left out with the shell where no sandbox works). */
export const PROCESS_TOOL_NAMES: readonly string[] = processTools.map((t) => t.name);
