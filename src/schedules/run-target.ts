/**
 * Carries out one schedule run through the team facade, as the schedule's owner, and waits for the
 * work to end. An agent target posts `⏰ @agent <prompt>` to the channel (so people see what was asked
 * and the agent answers there as usual); a chain target posts `/flow <input>`. The answer (or the
 * chain's last output) becomes the run's output.
 */
import type { Actor, ChannelMessage, FlowRecord, Team, TeamEvent, TeamRun } from "../team/types.js";
import type { ScheduleRecord, ScheduleTarget } from "./types.js";

/** How a run ended. */
export interface RunOutcome {
  status: "done" | "error";
  output?: string;
  error?: string;
}

/** Ids of the team work a run started, reported as soon as they are known. */
export interface RunProgress {
  teamRunId?: string;
  flowId?: string;
  messageId?: number;
}

/** Runs a schedule's target; resolves when the work ended or `signal` aborted (then as an error). */
export type TargetExecutor = (
  schedule: ScheduleRecord,
  actor: Actor,
  signal: AbortSignal,
  onProgress: (progress: RunProgress) => void,
) => Promise<RunOutcome>;

const TERMINAL_RUN = new Set<TeamRun["status"]>(["done", "error", "cancelled"]);
const TERMINAL_FLOW = new Set<FlowRecord["status"]>(["done", "error", "stopped"]);
const STOPPED = "interrupted: the scheduler stopped before the run finished";

// A zero-width space after `@` keeps the prompt's own @words from routing the message elsewhere.
const MENTION_START = /@(?=[\p{L}\p{N}_])/gu;

/** The message text that hands an agent target its prompt. */
export function agentMessageText(target: Extract<ScheduleTarget, { type: "agent" }>): string {
  return `⏰ @${target.agentId} ${target.prompt.replace(MENTION_START, "@\u200b")}`;
}

/** The message text that starts a chain target's flow. */
export function chainMessageText(target: Extract<ScheduleTarget, { type: "chain" }>): string {
  return `/flow ${target.input}`;
}

/** Collects one channel's events so a run that ends before we know its id is not missed. */
class ChannelWatch {
  readonly #events: TeamEvent[] = [];
  #waiters: Array<{ test: (e: TeamEvent) => boolean; resolve: (e: TeamEvent) => void }> = [];
  readonly unsubscribe: () => void;

  constructor(team: Team, channelId: string, watcher: Actor) {
    this.unsubscribe = team.subscribe(watcher, (event) => {
      if (
        event.channelId !== channelId ||
        (event.type !== "run" && event.type !== "message" && event.type !== "flow")
      ) {
        return;
      }
      this.#events.push(event);
      this.#waiters = this.#waiters.filter((w) => {
        if (!w.test(event)) return true;
        w.resolve(event);
        return false;
      });
    });
  }

  /** The first event seen or still to come that passes the test; undefined when aborted. */
  wait(test: (e: TeamEvent) => boolean, signal: AbortSignal): Promise<TeamEvent | undefined> {
    const seen = this.#events.find(test);
    if (seen) return Promise.resolve(seen);
    if (signal.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const onAbort = () => resolve(undefined);
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiters.push({
        test,
        resolve: (e) => {
          signal.removeEventListener("abort", onAbort);
          resolve(e);
        },
      });
    });
  }

  /** Agent messages a run posted, in order. */
  answersOf(runId: string): ChannelMessage[] {
    return this.#events.flatMap((e) =>
      e.type === "message" && e.message.runId === runId && e.message.author.type === "agent"
        ? [e.message]
        : [],
    );
  }
}

/** What running one target needs besides the target: the team, who acts, and where to watch and report. */
interface TargetRun {
  team: Team;
  origin: { scheduleId: string; name: string };
  actor: Actor;
  watch: ChannelWatch;
  signal: AbortSignal;
  onProgress: (progress: RunProgress) => void;
}

async function runAgentTarget(
  target: Extract<ScheduleTarget, { type: "agent" }>,
  { team, origin, actor, watch, signal, onProgress }: TargetRun,
): Promise<RunOutcome> {
  // A schedule's prompt gets a run of its own, whatever the chat's queue mode.
  const posted = await team.postMessage(actor, target.channelId, agentMessageText(target), {
    mode: "followup",
    scheduled: origin,
  });
  const started = posted.runs.find((r) => r.agentId === target.agentId);
  onProgress(
    started ? { teamRunId: started.id, messageId: posted.message.id } : { messageId: posted.message.id },
  );
  if (!started) {
    return {
      status: "error",
      error: `@${target.agentId} did not get the message: it is not in this channel (or not the agent of this direct chat).`,
    };
  }
  const ended = await watch.wait(
    (e) => e.type === "run" && e.run.id === started.id && TERMINAL_RUN.has(e.run.status),
    signal,
  );
  if (ended?.type !== "run") return { status: "error", error: STOPPED };
  const output = watch
    .answersOf(started.id)
    .map((m) => m.text)
    .join("\n\n");
  if (ended.run.status === "done") return { status: "done", output };
  const outcome: RunOutcome = {
    status: "error",
    error: ended.run.error ?? `@${target.agentId}'s run ended ${ended.run.status}.`,
  };
  if (output !== "") outcome.output = output;
  return outcome;
}

async function runChainTarget(
  target: Extract<ScheduleTarget, { type: "chain" }>,
  { team, origin, actor, watch, signal, onProgress }: TargetRun,
): Promise<RunOutcome> {
  const posted = await team.postMessage(actor, target.channelId, chainMessageText(target), {
    scheduled: origin,
  });
  const flow = posted.flow;
  onProgress(flow ? { flowId: flow.id, messageId: posted.message.id } : { messageId: posted.message.id });
  if (!flow)
    return { status: "error", error: "The message did not start the channel's collaboration chain." };
  const ended = await watch.wait(
    (e) => e.type === "flow" && e.flow.id === flow.id && TERMINAL_FLOW.has(e.flow.status),
    signal,
  );
  if (ended?.type !== "flow") return { status: "error", error: STOPPED };
  const final = ended.flow;
  const output = final.steps.filter((s) => s.output !== undefined).at(-1)?.output;
  if (final.status === "done") return { status: "done", output: output ?? "" };
  const failed = final.steps[final.currentStep];
  const outcome: RunOutcome = {
    status: "error",
    error:
      final.status === "stopped"
        ? "The collaboration flow was stopped."
        : (failed?.error ?? `The collaboration flow failed at step ${final.currentStep + 1}.`),
  };
  if (output !== undefined) outcome.output = output;
  return outcome;
}

/** The executor that runs targets through the team facade. */
export function createTeamExecutor(team: Team): TargetExecutor {
  return async (schedule, actor, signal, onProgress) => {
    const { target } = schedule;
    // Watches as an internal observer: the owner's own subscription would go silent if they lost
    // access mid-run, and the run would never be seen to end.
    const watch = new ChannelWatch(team, target.channelId, {
      userId: `schedule:${schedule.id}`,
      role: "admin",
    });
    try {
      const run: TargetRun = {
        team,
        origin: { scheduleId: schedule.id, name: schedule.name },
        actor,
        watch,
        signal,
        onProgress,
      };
      return target.type === "agent" ? await runAgentTarget(target, run) : await runChainTarget(target, run);
    } catch (err) {
      return { status: "error", error: err instanceof Error ? errorLine(err) : String(err) };
    } finally {
      watch.unsubscribe();
    }
  };
}

/** The message and hint of a team or runtime error. */
function errorLine(err: Error): string {
  const hint = "hint" in err && typeof err.hint === "string" && err.hint !== "" ? ` (${err.hint})` : "";
  return `${err.message}${hint}`;
}
