/** `dimsum chat`: an interactive conversation in a stored session, streamed as it happens. */

import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { AsyncQueue } from "../../agent/async-queue.js";
import { runSessionTurn } from "../../agent/session-runner.js";
import { SteeringQueue } from "../../agent/steering.js";
import { type AttachedFile, readAttachments, userContent } from "../../attachments/to-parts.js";
import { toDimsumError } from "../../errors.js";
import { stream } from "../../llm/providers.js";
import { sampleWithModel } from "../../mcp/sampling.js";
import type { ApprovalRequest } from "../../tools/types.js";
import { approvalQuestion, approveAll, rememberingAlways } from "../approval.js";
import { recentTurns } from "../chat/history.js";
import { expandPrompt, findPrompt, listMcpPrompts, promptUsage } from "../chat/mcp-prompts.js";
import { type Ask, terminalMcpHandlers } from "../chat/mcp-requests.js";
import { runSlashCommand } from "../chat/slash-commands.js";
import { reportCommandError } from "../command-errors.js";
import { EXIT_OK, exitCodeFor } from "../exit-codes.js";
import { createHumanRenderer } from "../render/human.js";
import { createSpinner } from "../render/spinner.js";
import { painterFor } from "../render/style.js";
import { type CliIo, setUpSession } from "../session-setup.js";
import { sessionTurnOptions } from "../session-turn.js";
import { noticeUnsandboxedShell } from "../shell-notice.js";
import { exitCodeForStop, guardOutput, type StopReason } from "../stop-signals.js";
import { resolveWorkspace } from "../workspace.js";
import { DEFAULT_SYSTEM } from "./run.js";

export interface ChatCommandOptions {
  /** The sandbox's network for this session: off, on, or hosts to allow (`--network`). */
  network?: string;
  /** Offer the process_* tools (`--processes`); the processes end with the chat. */
  processes?: boolean;
  /** Offer the browser tool (`--browser`). */
  browser?: boolean;
  user?: string;
  session?: string;
  model?: string;
  workspace?: string;
  tools?: string;
  yes?: boolean;
  maxIterations?: number;
  system?: string;
  /** Files attached to the first message. */
  attach?: string[];
}

/** Runs the REPL until /exit or end of input; returns the exit code. */
export async function chatCommand(options: ChatCommandOptions, io: CliIo): Promise<number> {
  let setup: Awaited<ReturnType<typeof setUpSession>> | undefined;
  let workspace: string;
  // MCP servers may ask the person something (elicitation, sampling) once the prompt is up.
  let ask: Ask | undefined;
  const mcpHandlers = terminalMcpHandlers({
    ask: (question, signal) => (ask ? ask(question, signal) : Promise.resolve(undefined)),
    out: io.stderr,
    sample: (params, signal) => {
      if (!setup) return Promise.reject(new Error("the chat is not ready"));
      return sampleWithModel(setup.model, stream, params, signal);
    },
  });
  try {
    workspace = resolveWorkspace(io.cwd, options.workspace);
    setup = await setUpSession(io, { ...options, workspace, mcpHandlers });
    await noticeUnsandboxedShell(setup.config, setup.tools, io.stderr);
  } catch (err) {
    return reportCommandError(err, io.stderr);
  }
  const { store, ref, model } = setup;
  const paintOut = painterFor(io.stdout, io.env);
  const paintErr = painterFor(io.stderr, io.env);
  const interactive = Boolean(io.stdin.isTTY);
  // Files wait here until the next message is sent: --attach for the first, /attach FILE for any.
  // The --attach files are read before the prompt starts reading lines.
  let attached: AttachedFile[] = [];
  const limits = setup.config.attachments;
  const noteAttached = (file: AttachedFile) =>
    io.stderr.write(
      paintErr(
        "dim",
        `attached ${file.name} (${file.mimeType}, ${file.data.length} bytes); it goes with your next message\n`,
      ),
    );
  const attach = async (paths: string[]): Promise<AttachedFile[]> => {
    const files = await readAttachments(
      paths.map((p) => resolve(io.cwd, p)),
      { ...limits, filesPerMessage: limits.filesPerMessage - attached.length },
    );
    attached = [...attached, ...files];
    return files;
  };
  if (options.attach && options.attach.length > 0) {
    try {
      await attach(options.attach);
    } catch (err) {
      const error = toDimsumError(err);
      io.stderr.write(`dimsum: ${error.toLine()}\n`);
      await setup.shutdown();
      return exitCodeFor(error.code);
    }
  }
  const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: interactive, prompt: "you› " });
  const spinner = createSpinner(io.stderr);
  let current: AbortController | undefined;
  /** Where lines typed during an answer go (see below); set while an answer runs. */
  let steering: SteeringQueue | undefined;

  ask = (question, signal) =>
    new Promise<string | undefined>((resolve) => {
      spinner.stop();
      if (signal.aborted) return resolve(undefined);
      const done = (answer: string | undefined) => {
        signal.removeEventListener("abort", onAbort);
        rl.off("close", onClose);
        resolve(answer);
      };
      const onAbort = () => done(undefined);
      const onClose = () => done(undefined);
      signal.addEventListener("abort", onAbort, { once: true });
      rl.once("close", onClose);
      rl.question(question, (answer) => done(answer));
    });

  rl.on("SIGINT", () => {
    if (current) current.abort();
    else rl.close();
  });
  // SIGTERM and a closed stdout end the chat as /exit does, after aborting the turn in progress.
  let stopReason: StopReason | undefined;
  const stopChat = (why: StopReason) => {
    if (stopReason !== undefined) {
      if (why === "SIGTERM") process.exit(exitCodeForStop(why));
      return;
    }
    stopReason = why;
    current?.abort();
    rl.close();
  };
  const onTerm = () => stopChat("SIGTERM");
  process.on("SIGTERM", onTerm);
  (io.output ?? guardOutput(io.stdout, io.stderr)).onClose(() => stopChat("EPIPE"));

  const approve = options.yes
    ? approveAll
    : interactive
      ? rememberingAlways(
          (request: ApprovalRequest) =>
            new Promise<string>((resolve) => {
              spinner.stop();
              rl.question(approvalQuestion(request), resolve);
            }),
        )
      : undefined;

  try {
    const recovered = await store.recoverInterruptedRuns(ref);
    io.stderr.write(
      paintErr(
        "dim",
        `dimsum chat · ${ref.userId}:${ref.sessionId} · ${model.provider}:${model.id} · ${workspace}\n`,
      ),
    );
    for (const line of setup.mcpStatus) io.stderr.write(paintErr("dim", `mcp ${line}\n`));
    for (const problem of setup.problems) io.stderr.write(paintErr("yellow", `skipped: ${problem}\n`));
    for (const run of recovered.runs) {
      io.stderr.write(
        paintErr("yellow", `a previous run (${run.id}) was interrupted; its finished steps are kept\n`),
      );
    }
    const history = await store.loadMessages(ref, { includeCompacted: true, limit: 40 });
    if (history.length > 0) {
      io.stderr.write(paintErr("dim", "— earlier in this session —\n"));
      for (const line of recentTurns(history, 3, paintErr)) io.stderr.write(`${line}\n`);
      io.stderr.write(paintErr("dim", "—\n"));
    }
    for (const file of attached) noteAttached(file);
    const prompts = setup.mcp ? await listMcpPrompts(setup.mcp) : [];
    for (const prompt of prompts) io.stderr.write(paintErr("dim", `mcp prompt ${promptUsage(prompt)}\n`));
    io.stderr.write(paintErr("dim", "type /help for commands\n"));
    if (interactive) rl.prompt();

    // At a terminal, a line typed while an answer streams steers it: the agent reads it before its
    // next model call. Commands, and lines from a pipe, wait for the answer to end.
    const lines = new AsyncQueue<string>();
    rl.on("line", (raw) => {
      const text = raw.trim();
      if (steering && interactive && text !== "" && !text.startsWith("/")) {
        steering.push(text);
        io.stderr.write(paintErr("dim", "↳ sent to the running answer\n"));
        return;
      }
      lines.push(raw);
    });
    rl.on("close", () => lines.close());

    for await (const raw of lines) {
      let line = raw.trim();
      if (line === "") {
        if (interactive) rl.prompt();
        continue;
      }
      if (/^\/attach(\s|$)/.test(line)) {
        const path = line.slice("/attach".length).trim();
        if (path === "") io.stderr.write("usage: /attach FILE (an image, a PDF or a text file)\n");
        else {
          await attach([path]).then(
            (files) => files.forEach(noteAttached),
            (err: unknown) => io.stderr.write(`dimsum: ${toDimsumError(err).toLine()}\n`),
          );
        }
        if (interactive) rl.prompt();
        continue;
      }
      const prompt = line.startsWith("/") ? findPrompt(line, prompts) : undefined;
      if (prompt && setup.mcp) {
        const expanded = await expandPrompt(setup.mcp, prompt, line, ask, new AbortController().signal).catch(
          (err: unknown) => {
            io.stderr.write(`dimsum: ${toDimsumError(err).toLine()}\n`);
            return undefined;
          },
        );
        if (expanded === undefined) {
          if (interactive) rl.prompt();
          continue;
        }
        io.stderr.write(paintErr("dim", `${expanded}\n`));
        line = expanded;
      } else if (line.startsWith("/")) {
        const result = await runSlashCommand(line, {
          store,
          memory: setup.memory,
          ref,
          model,
          out: io.stdout,
          paint: paintOut,
        });
        if (result === "exit") break;
        if (interactive) rl.prompt();
        continue;
      }
      if (stopReason !== undefined) break;
      current = new AbortController();
      steering = new SteeringQueue();
      const render = createHumanRenderer({ stdout: io.stdout, stderr: io.stderr, paintOut, paintErr });
      spinner.start("thinking…");
      const sent = attached;
      attached = [];
      for await (const event of runSessionTurn({
        ...sessionTurnOptions(setup, {
          input: userContent(line, sent),
          system: options.system ?? DEFAULT_SYSTEM,
          maxIterations: options.maxIterations,
          network: options.network,
          workspace,
          approve,
          signal: current.signal,
        }),
        steering,
      })) {
        if (event.type !== "turn_start" && event.type !== "run_start" && event.type !== "usage")
          spinner.stop();
        if (event.type === "turn_start" && event.iteration > 1) spinner.start("thinking…");
        render(event);
      }
      spinner.stop();
      current = undefined;
      // Lines that arrived after the answer's last step are answered next.
      for (const late of await steering.take()) lines.push(String(late.content));
      steering = undefined;
      if (interactive && stopReason === undefined) rl.prompt();
    }
    return stopReason === undefined ? EXIT_OK : exitCodeForStop(stopReason);
  } catch (err) {
    spinner.stop();
    if (stopReason !== undefined) return exitCodeForStop(stopReason);
    return reportCommandError(err, io.stderr);
  } finally {
    process.off("SIGTERM", onTerm);
    rl.close();
    await setup.shutdown();
  }
}
