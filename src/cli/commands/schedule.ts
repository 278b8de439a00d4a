/**
 * `dimsum schedule list|add|rm|run`: schedules, straight on the database under DIMSUM_HOME. A running
 * server re-reads the schedules at least every 15 s (its poll), so what is added or removed here
 * applies there within that time, and on its next start otherwise. `run` queues a run that the
 * server starts on that next look, and waits for its outcome.
 */
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { loadConfig } from "../../config/load-config.js";
import { DimsumError, isRefusal, notFound } from "../../errors.js";
import { systemClock } from "../../schedules/clock.js";
import {
  type ScheduleEngine,
  ScheduleService,
  type TargetDirectory,
} from "../../schedules/schedule-service.js";
import { type ScheduleStore, SqliteScheduleStore } from "../../schedules/schedule-store.js";
import { describeTiming } from "../../schedules/timing.js";
import type {
  MissedPolicy,
  ScheduleRecord,
  ScheduleRunRecord,
  ScheduleTarget,
  ScheduleTiming,
} from "../../schedules/types.js";
import { type UserRepository, UserStore } from "../../server/auth/user-store.js";
import { type Database, openDatabase } from "../../store/database.js";
import { assertCanSee } from "../../team/access.js";
import { createSqliteTeamStore } from "../../team/team-store.js";
import type { Actor } from "../../team/types.js";
import { checkAction, reportActionError } from "../command-errors.js";
import type { CommandIo } from "../command-io.js";
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from "../exit-codes.js";

export const SCHEDULE_ACTIONS = ["list", "add", "rm", "run"] as const;

export interface ScheduleCommandOptions {
  json?: boolean;
  name?: string;
  cron?: string;
  tz?: string;
  at?: string;
  every?: number;
  channel?: string;
  agent?: string;
  prompt?: string;
  chain?: string;
  missed?: string;
  /** Username (or id) of the account the runs act as; default: the server's first owner. */
  owner?: string;
  disabled?: boolean;
  /** `run`: wait for the outcome (default true). */
  wait?: boolean;
  /** `run`: seconds to wait for a server to pick the run up and finish it (default 120). */
  timeout?: number;
}

export interface ScheduleCommandIo extends CommandIo {
  /** How often `run` looks at the database while waiting (default 500 ms). */
  pollMs?: number;
}

function usage(message: string): DimsumError {
  return new DimsumError("config", message, {
    hint:
      "usage: dimsum schedule list | add --name N (--cron E [--tz Z] | --at ISO | --every SECONDS) --channel C " +
      "(--agent A --prompt P | --chain INPUT) [--missed skip|run_once] [--owner USER] | rm ID | run ID [--no-wait]",
  });
}

function timingOf(options: ScheduleCommandOptions): ScheduleTiming {
  const given = [options.cron, options.at, options.every].filter((v) => v !== undefined).length;
  if (given !== 1) throw usage("give exactly one of --cron, --at or --every");
  if (options.cron !== undefined)
    return { kind: "cron", expression: options.cron, timezone: options.tz ?? "UTC" };
  if (options.at !== undefined) return { kind: "once", at: options.at };
  return { kind: "interval", seconds: options.every ?? 0 };
}

function targetOf(options: ScheduleCommandOptions): ScheduleTarget {
  if (!options.channel) throw usage("--channel is required");
  if (options.chain !== undefined) {
    if (options.agent !== undefined || options.prompt !== undefined)
      throw usage("--chain excludes --agent/--prompt");
    if (options.chain.trim() === "") throw usage("--chain needs the chain's input text");
    return { type: "chain", channelId: options.channel, input: options.chain };
  }
  if (!options.agent || !options.prompt?.trim()) throw usage("an agent target needs --agent and --prompt");
  return {
    type: "agent",
    agentId: options.agent.replace(/^@/, ""),
    prompt: options.prompt,
    channelId: options.channel,
  };
}

function missedOf(value: string | undefined): MissedPolicy | undefined {
  if (value === undefined) return undefined;
  if (value !== "skip" && value !== "run_once")
    throw usage(`--missed must be skip or run_once (got "${value}")`);
  return value;
}

async function ownerOf(users: UserRepository, wanted: string | undefined): Promise<Actor> {
  const all = await users.list();
  const user =
    wanted === undefined
      ? all.filter((u) => u.role === "owner").sort((a, b) => a.createdAt - b.createdAt)[0]
      : all.find((u) => u.id === wanted || u.username.toLowerCase() === wanted.toLowerCase());
  if (!user) {
    throw new DimsumError(
      "config",
      wanted === undefined ? "the server has no owner account yet" : `no account "${wanted}"`,
      { hint: wanted === undefined ? "start dimsum serve once to create it" : "pass --owner <username>" },
    );
  }
  return { userId: user.id, role: user.role };
}

/** Channels and agents read straight from the database, with the owner's channel access checked. */
function directoryOn(db: Database): TargetDirectory {
  const team = createSqliteTeamStore(db);
  return {
    async getChannel(actor, id) {
      const channel = await team.channels.get(id);
      if (!channel) throw notFound(`No channel with id "${id}".`);
      assertCanSee(actor, channel);
      return channel;
    },
    async getAgent(_actor, id) {
      const agent = await team.agents.get(id);
      if (!agent) throw notFound(`No agent @${id}.`);
      return agent;
    },
  };
}

// No scheduler runs in the CLI: the server's picks changes up from the database.
const offline: ScheduleEngine = {
  clock: systemClock,
  wake: () => undefined,
  isRunning: () => false,
  runNow: async () => {
    throw new DimsumError("internal", "runs start in the server; use ScheduleStore.requestRun");
  },
};

function line(s: ScheduleRecord): string {
  const target =
    s.target.type === "agent"
      ? `@${s.target.agentId} in ${s.target.channelId}`
      : `chain of ${s.target.channelId}`;
  const next = s.nextRunAt ? new Date(s.nextRunAt).toISOString() : "-";
  return `${s.id}  ${s.enabled ? "on " : "off"}  ${s.name}  ${describeTiming(s.timing)} → ${target}  next ${next}\n`;
}

/** Waits for the server to start the requested run and for the run to end. */
async function awaitRun(
  store: ScheduleStore,
  id: string,
  known: ReadonlySet<string>,
  deadline: number,
  pollMs: number,
): Promise<ScheduleRunRecord | undefined> {
  while (Date.now() < deadline) {
    const schedule = await store.get(id);
    if (!schedule) throw notFound(`The schedule ${id} was deleted while waiting.`);
    if (schedule.runRequestedAt === undefined) {
      // The first manual run that did not exist before the request is ours (no clock comparison).
      const run = (await store.listRuns(id, 20)).find((r) => r.trigger === "manual" && !known.has(r.id));
      if (run && run.status !== "running") return run;
    }
    await sleep(pollMs);
  }
  return undefined;
}

/** Runs one schedule action; returns the exit code. Errors are printed to stderr, never thrown. */
export async function scheduleCommand(
  action: string,
  args: string[],
  options: ScheduleCommandOptions,
  io: ScheduleCommandIo,
): Promise<number> {
  let db: Database | undefined;
  try {
    checkAction("schedule", SCHEDULE_ACTIONS, action, usage);
    const config = loadConfig({ cwd: io.cwd, env: io.env });
    db = openDatabase(join(config.home, "dimsum.db"));
    const store: ScheduleStore = new SqliteScheduleStore(db);
    const users = new UserStore(db);
    const out = (value: unknown, human: string) =>
      io.stdout.write(options.json ? `${JSON.stringify(value)}\n` : human);

    if (action === "list") {
      const all = await store.list();
      if (options.json) io.stdout.write(`${JSON.stringify(all)}\n`);
      else io.stdout.write(all.length === 0 ? "no schedules\n" : all.map(line).join(""));
      return EXIT_OK;
    }
    if (action === "add") {
      if (!options.name?.trim()) throw usage("--name is required");
      const owner = await ownerOf(users, options.owner);
      const service = new ScheduleService({
        store,
        scheduler: offline,
        team: directoryOn(db),
        actorOf: async (userId) => {
          const user = await users.get(userId);
          return user ? { userId: user.id, role: user.role } : undefined;
        },
      });
      const missedPolicy = missedOf(options.missed);
      const created = await service.create(owner, {
        name: options.name,
        timing: timingOf(options),
        target: targetOf(options),
        enabled: options.disabled !== true,
        ...(missedPolicy ? { missedPolicy } : {}),
      });
      out(created, `added ${line(created)}(a running server picks it up within 15 s)\n`);
      return EXIT_OK;
    }
    if (args.length !== 1 || !args[0]) throw usage(`${action} needs exactly one schedule id`);
    const id = args[0];
    if (action === "rm") {
      if (!(await store.delete(id))) throw notFound(`No schedule with id "${id}".`);
      out({ deleted: id }, `deleted ${id}\n`);
      return EXIT_OK;
    }
    const requestedAt = Date.now();
    const known = new Set((await store.listRuns(id, 20)).map((r) => r.id));
    if (!(await store.requestRun(id, requestedAt))) throw notFound(`No schedule with id "${id}".`);
    if (options.wait === false) {
      out({ queued: id }, `queued a run of ${id}; a running server starts it within 15 s\n`);
      return EXIT_OK;
    }
    const timeoutMs = (options.timeout ?? 120) * 1000;
    const run = await awaitRun(store, id, known, requestedAt + timeoutMs, io.pollMs ?? 500);
    if (!run) {
      out(
        { queued: id, finished: false },
        `queued a run of ${id}, but no server finished it within ${timeoutMs / 1000} s; ` +
          "dimsum serve runs it when it starts (or check later with dimsum schedule list)\n",
      );
      return EXIT_OK;
    }
    out(
      run,
      run.status === "done" ? `done: ${run.output ?? ""}\n` : `${run.status}: ${run.error ?? "no details"}\n`,
    );
    return run.status === "done" ? EXIT_OK : EXIT_FAILURE;
  } catch (err) {
    if (isRefusal(err)) {
      io.stderr.write(`error: ${err.toLine()}\n`);
      return err.code === "invalid" ? EXIT_USAGE : EXIT_FAILURE;
    }
    return reportActionError(err, io.stderr);
  } finally {
    db?.close();
  }
}
