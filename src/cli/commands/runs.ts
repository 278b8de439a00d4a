/** `dimsum runs` and `dimsum trace <runId>`: what runs happened and what each one did. */
import { costOf } from "../../agent/usage.js";
import { lookupModel } from "../../config/model-catalog.js";
import type { RunRecord } from "../../store/types.js";
import { reportCommandError } from "../command-errors.js";
import { EXIT_FAILURE, EXIT_OK } from "../exit-codes.js";
import { type CliIo, defaultUserId, openStore } from "../session-setup.js";

/** Lists the runs of one session, newest first. */
export async function runsCommand(
  options: { user?: string; session?: string; json?: boolean },
  io: CliIo,
): Promise<number> {
  try {
    const handle = openStore(io);
    try {
      const ref = {
        userId: defaultUserId(handle.config, options.user),
        sessionId: options.session ?? "default",
      };
      const runs = await handle.store.listRuns(ref, { limit: 50 });
      // Cost at the model's prices: the config's `models` entry, else the catalogue's.
      const costOfRun = (run: RunRecord) => {
        if (!run.usage) return undefined;
        const id = run.model.slice(run.model.indexOf(":") + 1);
        return costOf(run.usage, handle.config.file.models[run.model]?.pricing ?? lookupModel(id)?.pricing);
      };
      if (options.json) {
        for (const run of runs) {
          const costUsd = costOfRun(run);
          io.stdout.write(`${JSON.stringify(costUsd === undefined ? run : { ...run, costUsd })}\n`);
        }
        return EXIT_OK;
      }
      if (runs.length === 0) io.stdout.write(`no runs in ${ref.userId}:${ref.sessionId}\n`);
      let total = 0;
      for (const run of runs) {
        const when = new Date(run.startedAt).toISOString().replace("T", " ").slice(0, 19);
        const u = run.usage;
        const tokens = u
          ? ` ${u.inputTokens}/${u.outputTokens} tok (${u.cachedInputTokens ?? 0} cached)`
          : "";
        const cost = costOfRun(run);
        if (cost !== undefined) total += cost;
        const price = cost === undefined ? "" : ` $${cost.toFixed(5)}`;
        const took =
          run.endedAt === undefined ? "" : ` ${((run.endedAt - run.startedAt) / 1000).toFixed(1)}s`;
        io.stdout.write(
          `${run.id}  ${when}  ${run.status.padEnd(11)} ${run.model}${tokens}${price}${took}  ${(run.prompt ?? "").slice(0, 60)}\n`,
        );
      }
      if (runs.length > 0)
        io.stdout.write(`total: ${runs.length} runs, $${total.toFixed(5)} at known prices\n`);
      return EXIT_OK;
    } finally {
      handle.close();
    }
  } catch (err) {
    return reportCommandError(err, io.stderr);
  }
}

/** Prints a run's trace: one line per recorded event (or JSON Lines with --json). */
export async function traceCommand(
  runId: string,
  options: { user?: string; json?: boolean },
  io: CliIo,
): Promise<number> {
  try {
    const handle = openStore(io);
    try {
      const userId = defaultUserId(handle.config, options.user);
      const run = await handle.store.findRun(userId, runId);
      if (!run) {
        io.stderr.write(
          `dimsum: no run ${runId} for user ${userId} (list them with: dimsum runs --user ${userId} --session <id>)\n`,
        );
        return EXIT_FAILURE;
      }
      const ref = { userId: run.userId, sessionId: run.sessionId };
      const events = await handle.store.getRunEvents(ref, runId);
      if (options.json) {
        for (const e of events) io.stdout.write(`${JSON.stringify(e.payload)}\n`);
        return EXIT_OK;
      }
      io.stdout.write(
        `run ${run.id} · ${run.userId}:${run.sessionId} · ${run.model} · ${run.status}${run.note ? ` (${run.note})` : ""}\n`,
      );
      for (const e of events) io.stdout.write(`${String(e.seq).padStart(4)} ${describe(e.payload)}\n`);
      return EXIT_OK;
    } finally {
      handle.close();
    }
  } catch (err) {
    return reportCommandError(err, io.stderr);
  }
}

function describe(payload: unknown): string {
  const p = payload as Record<string, unknown> & { type: string };
  switch (p.type) {
    case "model_call": {
      const u = p.usage as { inputTokens: number; outputTokens: number } | undefined;
      return `model call #${p.iteration}: ${p.latencyMs} ms${u ? `, ${u.inputTokens} in / ${u.outputTokens} out tokens` : ""}`;
    }
    case "tool_call":
      return `tool call ${p.name} ${JSON.stringify(p.args).slice(0, 120)}`;
    case "tool_result":
      return `tool result ${p.name} ${p.ok ? "ok" : "error"} ${p.durationMs} ms: ${String(p.output).replace(/\s+/g, " ").slice(0, 100)}`;
    case "done":
      return `done after ${p.iterations} model calls${p.capReached ? " (cap reached)" : ""}`;
    case "error":
      return `error [${p.code}]: ${p.message}`;
    case "compaction":
      return `compaction (${p.method}): ${p.messagesRemoved} messages${p.note ? `; ${p.note}` : ""}`;
    default:
      return p.type;
  }
}
