/** `dimsum run "<prompt>"`: one-shot agent run, streamed to the terminal or as JSON Lines. */

import { resolve } from "node:path";
import type { AgentEvent } from "../../agent/events.js";
import {
  buildLayeredContext,
  type LayerResult,
  renderTurnLayers,
  splitLayers,
} from "../../agent/layered-context.js";
import { runAgent } from "../../agent/run-agent.js";
import { observeEvents } from "../../agent/run-observer.js";
import { contextEvent, runSessionTurn } from "../../agent/session-runner.js";
import { turnContextMessage } from "../../agent/turn-context.js";
import { loadConfig } from "../../config/load-config.js";
import { resolveModel } from "../../config/resolve-model.js";
import { toDimsumError } from "../../errors.js";
import { fallbackSettings } from "../../llm/fallback-chain.js";
import type { ReasoningEffort, StreamOptions, UserMessage } from "../../llm/types.js";
import { startTelemetry } from "../../telemetry/index.js";
import { networkOption, withNetworkPolicy } from "../../tools/builtin/sandbox/sandbox-network.js";
import { memoryTodoStore } from "../../tools/memory-todo-store.js";
import type { ApprovalRequest } from "../../tools/types.js";
import { approveAll, terminalApproval } from "../approval.js";
import { loadCapabilities, toolNames } from "../capabilities.js";
import { EXIT_OK, exitCodeFor } from "../exit-codes.js";
import { heldUntil } from "../held-events.js";
import { readOutputSchema } from "../output-schema.js";
import { createHumanRenderer } from "../render/human.js";
import { writeJsonLine } from "../render/json-lines.js";
import { painterFor } from "../render/style.js";
import type { CliIo } from "../session-setup.js";
import { cliToolEnvironment, sessionToolOptions } from "../session-tools.js";
import { sessionTurnOptions } from "../session-turn.js";
import { noticeUnsandboxedShell } from "../shell-notice.js";
import { exitCodeForStop, guardOutput, watchStop } from "../stop-signals.js";
import { resolveWorkspace } from "../workspace.js";

export interface RunCommandOptions {
  model?: string;
  /** The sandbox's network for this run: off, on, or hosts to allow (`--network`). */
  network?: string;
  /** Offer the process_* tools (`--processes`); the processes end with the command. */
  processes?: boolean;
  /** Offer the browser tool (`--browser`). */
  browser?: boolean;
  /** Reasoning effort of every model call of the run (`--reasoning`). */
  reasoning?: ReasoningEffort;
  json?: boolean;
  workspace?: string;
  maxIterations?: number;
  tools?: string;
  yes?: boolean;
  system?: string;
  user?: string;
  session?: string;
  /** Files to attach to the prompt (paths, relative to the working directory). */
  attach?: string[];
  /** A JSON Schema file the final answer must follow. */
  schema?: string;
}

/** The default system prompt for CLI runs and chats. */
export const DEFAULT_SYSTEM =
  "You are Dimsum, a capable assistant that uses tools when they help. Work in the user's workspace. " +
  "Be concise; say what you did and what you found.";

/** Runs one prompt to completion; returns the process exit code. */
export async function runCommand(prompt: string, options: RunCommandOptions, io: CliIo): Promise<number> {
  // SIGINT, SIGTERM and a closed stdout all abort the run; tools and the database are closed on the way out.
  const stop = watchStop(io.output ?? guardOutput(io.stdout, io.stderr));
  const emit = options.json
    ? (event: AgentEvent) => writeJsonLine(io.stdout, event)
    : createHumanRenderer({
        stdout: io.stdout,
        stderr: io.stderr,
        paintOut: painterFor(io.stdout, io.env),
        paintErr: painterFor(io.stderr, io.env),
        structured: options.schema !== undefined,
      });
  try {
    let exitCode = EXIT_OK;
    for await (const event of startRun(prompt, options, io, stop.signal)) {
      emit(event);
      if (event.type === "error") exitCode = exitCodeFor(event.code);
    }
    return stop.reason === undefined ? exitCode : exitCodeForStop(stop.reason);
  } catch (err) {
    if (stop.reason !== undefined) return exitCodeForStop(stop.reason);
    const error = toDimsumError(err);
    if (options.json) {
      writeJsonLine(io.stdout, {
        type: "error",
        code: error.code,
        message: error.message,
        ...(error.hint ? { hint: error.hint } : {}),
      });
    } else io.stderr.write(`dimsum: ${error.toLine()}\n`);
    return exitCodeFor(error.code);
  } finally {
    stop.dispose();
  }
}

/** A plain run, or a turn in a stored session when --user or --session is given. */
async function* startRun(
  prompt: string,
  options: RunCommandOptions,
  io: CliIo,
  signal: AbortSignal,
): AsyncGenerator<AgentEvent> {
  const workspace = resolveWorkspace(io.cwd, options.workspace);
  const approve = approvalFor(options, io);
  const input = await promptContent(prompt, options.attach, io);
  const output = options.schema !== undefined ? readOutputSchema(io.cwd, options.schema) : undefined;
  if (options.user || options.session) {
    // The session store (SQLite) loads only for runs that continue a stored conversation.
    const { setUpSession } = await import("../session-setup.js");
    const setup = await setUpSession(io, options);
    for (const problem of setup.problems) io.stderr.write(`dimsum: skipped ${problem}\n`);
    for (const line of setup.mcpStatus) io.stderr.write(`dimsum: mcp ${line}\n`);
    await noticeUnsandboxedShell(setup.config, setup.tools, io.stderr);
    try {
      const recovered = await setup.store.recoverInterruptedRuns(setup.ref);
      for (const run of recovered.runs) io.stderr.write(`dimsum: closed interrupted run ${run.id}\n`);
      yield* runSessionTurn({
        ...sessionTurnOptions(setup, {
          input,
          system: options.system ?? DEFAULT_SYSTEM,
          maxIterations: options.maxIterations,
          network: options.network,
          workspace,
          approve,
          signal,
        }),
        ...streamOptionsFor(options),
        ...(output ? { output } : {}),
      });
    } finally {
      await setup.shutdown();
    }
    return;
  }
  const config = loadConfig({ cwd: io.cwd, env: io.env });
  const model = resolveModel(config, options.model);
  const only = toolNames(options.tools);
  const capabilities = await loadCapabilities(config, io.cwd, {
    ...(only ? { only } : {}),
    sessionTools: sessionToolOptions(options),
  });
  for (const problem of capabilities.problems) io.stderr.write(`dimsum: skipped ${problem}\n`);
  for (const line of capabilities.mcpStatus) io.stderr.write(`dimsum: mcp ${line}\n`);
  const system = options.system ?? DEFAULT_SYSTEM;
  let layers: LayerResult | undefined;
  const telemetry = await startTelemetry(config.telemetry, warnOn(io));
  try {
    // The sandbox probe runs while the run starts; the notice still comes before the run's output.
    const notice = noticeUnsandboxedShell(config, capabilities.tools, io.stderr);
    const run = runAgent({
      model,
      messages: [{ role: "user", content: input }],
      system,
      tools: capabilities.tools,
      maxIterations: options.maxIterations ?? config.maxIterations,
      keepImagesTurns: config.keepImagesTurns,
      signal,
      fallback: fallbackSettings(config.modelFallback),
      ...streamOptionsFor(options),
      ...(output ? { output } : {}),
      toolEnvironment: {
        workspace,
        todos: memoryTodoStore(),
        config: withNetworkPolicy(config.tools, networkOption(options.network)),
        ...cliToolEnvironment(capabilities.environment),
        ...(approve ? { approve } : {}),
      },
      buildContext: async ({
        runId,
        system: asked,
        messages,
        tools,
        toolsOffered,
        signal: runSignal,
        report,
      }) => {
        if (!layers) {
          layers = await capabilities.layers({ query: prompt, signal: runSignal });
          report(contextEvent(runId, layers));
        }
        const { stable, turn } = splitLayers(layers.layers);
        // The turn context follows the prompt (the run's first message) in every call of the run.
        const text = renderTurnLayers(turn);
        const withTurn = text
          ? [...messages.slice(0, 1), turnContextMessage(text), ...messages.slice(1)]
          : messages;
        return buildLayeredContext(
          { system: asked ?? system, ...stable },
          withTurn,
          toolsOffered ? tools.schemas() : undefined,
        );
      },
    });
    yield* heldUntil(
      notice,
      observeEvents(run, telemetry?.observe, {
        agentId: "dimsum",
        model,
        input: prompt,
        conversationId: "dimsum-run",
      }),
    );
  } finally {
    // Spans still buffered are sent before the process exits.
    await telemetry?.shutdown();
    await capabilities.close();
  }
}

/** The prompt, with the files of --attach read, checked and added after it. */
async function promptContent(
  prompt: string,
  paths: readonly string[] | undefined,
  io: CliIo,
): Promise<UserMessage["content"]> {
  if (!paths || paths.length === 0) return prompt;
  // Attachment handling loads only for runs that attach something.
  const { readAttachments, userContent } = await import("../../attachments/to-parts.js");
  const config = loadConfig({ cwd: io.cwd, env: io.env });
  const files = await readAttachments(
    paths.map((p) => resolve(io.cwd, p)),
    config.attachments,
  );
  return userContent(prompt, files);
}

function warnOn(io: CliIo): (message: string) => void {
  return (message) => io.stderr.write(`dimsum: ${message}\n`);
}

function streamOptionsFor(options: RunCommandOptions): {
  streamOptions?: Omit<StreamOptions, "signal" | "toolChoice">;
} {
  return options.reasoning ? { streamOptions: { reasoning: { effort: options.reasoning } } } : {};
}

function approvalFor(
  options: RunCommandOptions,
  io: CliIo,
): ((request: ApprovalRequest) => Promise<boolean>) | undefined {
  if (options.yes) return approveAll;
  return io.stdin.isTTY ? terminalApproval(io.stdin, io.stderr) : undefined;
}
