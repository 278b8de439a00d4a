/** `dimsum run "<prompt>"`: one-shot agent run, streamed to the terminal or as JSON Lines. */
import { realpathSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { AgentEvent } from "../../agent/events.js";
import { runAgent } from "../../agent/run-agent.js";
import { loadConfig } from "../../config/load-config.js";
import { resolveModel } from "../../config/resolve-model.js";
import { DimsumError, toDimsumError } from "../../errors.js";
import { createBuiltinRegistry } from "../../tools/builtin/index.js";
import { memoryTodoStore } from "../../tools/memory-todo-store.js";
import { approveAll, terminalApproval } from "../approval.js";
import { EXIT_OK, exitCodeFor } from "../exit-codes.js";
import { createHumanRenderer } from "../render/human.js";
import { writeJsonLine } from "../render/json-lines.js";
import { painterFor } from "../render/style.js";

export interface RunCommandOptions {
  model?: string;
  json?: boolean;
  workspace?: string;
  maxIterations?: number;
  tools?: string;
  yes?: boolean;
  system?: string;
}

export interface CliIo {
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
}

const DEFAULT_SYSTEM =
  "You are Dimsum, a capable assistant that uses tools when they help. Work in the user's workspace. " +
  "Be concise; say what you did and what you found.";

/** Runs one prompt to completion; returns the process exit code. */
export async function runCommand(prompt: string, options: RunCommandOptions, io: CliIo): Promise<number> {
  const controller = new AbortController();
  const onSigint = () => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort();
  };
  process.on("SIGINT", onSigint);
  const emit = options.json
    ? (event: AgentEvent) => writeJsonLine(io.stdout, event)
    : createHumanRenderer({
        stdout: io.stdout,
        stderr: io.stderr,
        paintOut: painterFor(io.stdout, io.env),
        paintErr: painterFor(io.stderr, io.env),
      });
  try {
    const config = loadConfig({ cwd: io.cwd, env: io.env });
    const model = resolveModel(config, options.model);
    const workspace = resolveWorkspace(io.cwd, options.workspace);
    const registry = createBuiltinRegistry(
      options.tools ? options.tools.split(",").map((s) => s.trim()) : undefined,
    );
    const approve = options.yes
      ? approveAll
      : io.stdin.isTTY
        ? terminalApproval(io.stdin, io.stderr)
        : undefined;
    let exitCode = EXIT_OK;
    for await (const event of runAgent({
      model,
      messages: [{ role: "user", content: prompt }],
      system: options.system ?? DEFAULT_SYSTEM,
      tools: registry,
      maxIterations: options.maxIterations ?? config.maxIterations,
      signal: controller.signal,
      toolEnvironment: {
        workspace,
        todos: memoryTodoStore(),
        config: config.tools,
        ...(approve ? { approve } : {}),
      },
    })) {
      emit(event);
      if (event.type === "error") exitCode = exitCodeFor(event.code);
    }
    return exitCode;
  } catch (err) {
    const error = toDimsumError(err);
    if (options.json)
      writeJsonLine(io.stdout, {
        type: "error",
        code: error.code,
        message: error.message,
        ...(error.hint ? { hint: error.hint } : {}),
      });
    else io.stderr.write(`dimsum: ${error.toLine()}\n`);
    return exitCodeFor(error.code);
  } finally {
    process.off("SIGINT", onSigint);
  }
}

/** The workspace as an absolute real path; it must exist and be a directory. */
export function resolveWorkspace(cwd: string, dir: string | undefined): string {
  const path = resolve(cwd, dir ?? ".");
  try {
    if (!statSync(path).isDirectory()) throw new Error("not a directory");
    return realpathSync(path);
  } catch (err) {
    throw new DimsumError(
      "config",
      `workspace ${path} is not a usable directory: ${(err as Error).message}`,
      {
        hint: "pass --workspace with an existing folder",
      },
    );
  }
}
