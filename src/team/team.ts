/**
 * The team facade: the composition root of the team domain and the one object the HTTP/WebSocket edge
 * talks to. It checks access, routes messages to agents (mentions, @all, leader, flows) and wires the
 * runs, flows and events together.
 */

import { createHash } from "node:crypto";
import { existsSync, mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import type { Database } from "better-sqlite3";
import type { RemoteAgentConfig } from "../a2a/remote-config.js";
import type { ObserveRun } from "../agent/run-observer.js";
import { checkFileCount, cleanFileName } from "../attachments/kinds.js";
import { attachBytes } from "../attachments/to-parts.js";
import { CapabilityAssembly, type CapabilityServices } from "../capabilities/index.js";
import type { DimsumConfig } from "../config/load-config.js";
import { resolveModel } from "../config/resolve-model.js";
import { conflict, DimsumError, forbidden, invalid, notFound } from "../errors.js";
import { type FallbackSettings, fallbackSettings } from "../llm/fallback-chain.js";
import type { ModelSpec, StreamFunction, StreamOptions } from "../llm/types.js";
import type { BudgetStore } from "../store/budgets/budget-store.js";
import { SqliteSessionStore } from "../store/sqlite-session-store.js";
import type { SessionStore } from "../store/types.js";
import { chatProcessKey } from "../tools/process/process-manager.js";
import type { Tool } from "../tools/types.js";
import { assertCanManage, assertNotGuest, canSeeChannel, isAdmin } from "./access.js";
import { AgentRunner } from "./agent-runner.js";
import { AgentService } from "./agent-service.js";
import type { TurnRuntime } from "./agent-turn.js";
import { BudgetGuard } from "./budget-guard.js";
import { createCallAgentTool } from "./call-agent-tool.js";
import { ChannelService } from "./channel-service.js";
import { chatFiles } from "./chat-files.js";
import { chatTitle } from "./chat-title.js";
import { Elicitations } from "./elicitations.js";
import { EventBus, MembershipIndex } from "./event-bus.js";
import { FlowRunner } from "./flow-runner.js";
import { Handoffs } from "./handoffs.js";
import { McpApps } from "./mcp-apps.js";
import { meetingFacade } from "./meeting-facade.js";
import { MeetingRunner } from "./meeting-runner.js";
import { MessageQueue, type QueuedFor } from "./message-queue.js";
import { PersonaFiles, type PersonaStore } from "./personas.js";
import { routeMessage } from "./routing.js";
import { RunApprovals } from "./run-approvals.js";
import { INSTANCE_LOST, type RunBody, type RunHandle, RunManager } from "./run-manager.js";
import { sinceDays, spendReport } from "./spend.js";
import { STARTER_AGENTS } from "./starter-agents.js";
import { type MeetingRepository, sqliteMeetings } from "./store/meeting-repo.js";
import { namesFrom, peopleIn } from "./team-prompt.js";
import { joinRelay, type TeamRelay } from "./team-relay.js";
import { createSqliteTeamStore, type RunJob, type StoredRun, type TeamStore } from "./team-store.js";
import type {
  Actor,
  AgentRecord,
  ChannelMessage,
  ChannelRecord,
  FlowRecord,
  MessagePart,
  PostResult,
  QueueMode,
  Team,
  TeamRun,
} from "./types.js";

export interface TeamDeps {
  /**
   * A migrated Dimsum SQLite database (`openDatabase`), when `stores` is not given; the caller closes
   * it after `team.close()`.
   */
  db?: Database;
  /** The team's repositories (default: SQLite over `db`); PostgreSQL for several instances. */
  teamStore?: TeamStore;
  /** The groups' meetings (default: SQLite over `db`). */
  meetings?: MeetingRepository;
  /** Agents' personas (default: SOUL.md files under `<home>/agents`). */
  personas?: PersonaStore;
  /**
   * A database other instances may share (PostgreSQL): runs are leased to this instance (see
   * run-manager.ts), so a run whose instance dies is closed by another one; with a relay, live events
   * go out to and come in from the others.
   */
  cluster?: {
    /** This instance's id (the relay's when there is one). */
    instanceId: string;
    relay?: TeamRelay;
    /** How long a run's lease lasts unrenewed (default 30 s) and how often it is renewed (10 s). */
    leaseTtlMs?: number;
    leaseCheckMs?: number;
  };
  /** DIMSUM_HOME: personas live in `<home>/agents`, workspaces in `<home>/workspaces`. */
  home: string;
  config: DimsumConfig;
  /** Where agent turns are stored (default: the SQLite session store on `db`). */
  store?: SessionStore;
  /** The provider function (default: by each model's wire protocol). */
  stream?: StreamFunction;
  streamOptions?: Omit<StreamOptions, "signal" | "toolChoice">;
  /** Text deltas of one answer merged into at most one event per this many ms (default 50). */
  deltaFrameMs?: number;
  /** Provider cooldowns of model chains (default: this team's own, in memory, at the configured lengths). */
  fallback?: FallbackSettings;
  /** The budgets runs are held to (Settings → Spend); none: unlimited. */
  budgets?: BudgetStore;
  /** The model of an agent (default: its `model`, else the configured default). */
  resolveAgentModel?: (agent: AgentRecord) => ModelSpec | Promise<ModelSpec>;
  /** The tools' workspace for a channel (default `<home>/workspaces/<channelId>`, created). */
  workspaceFor?: (channelId: string) => string;
  now?: () => number;
  /** A person's display name in agents' input (default: the user id). */
  userName?: (userId: string) => string | Promise<string>;
  /**
   * The long-lived services runs draw their tools and layers from (memory, knowledge bases, MCP
   * servers, HTTP tools, plugins, skills); default: the built-in tools alone.
   */
  capabilities?: Omit<CapabilityServices, "config" | "team">;
  /**
   * Tools an agent gets only when its allow list names them (e.g. `manage_schedule`): their names
   * (accepted in allow lists), a factory acting for the person who started the run, and instances
   * describing them for the tool catalogue.
   */
  grantableTools?: GrantableTools;
  /** A person's role (guests read no knowledge base); default: everyone may. */
  roleOf?: (userId: string) => Actor["role"] | undefined | Promise<Actor["role"] | undefined>;
  /** Create the starter agents on first start (default true). */
  starterAgents?: boolean;
  /** Failures of background bookkeeping (default: a process warning). */
  onError?: (err: unknown) => void;
  /** How long a person has to answer an MCP server's request for input (default five minutes). */
  elicitationTimeoutMs?: number;
  /** How often runs that waited too long for approvals are looked for (default a minute). */
  approvalSweepMs?: number;
  /** Another reader of every run's events (OpenTelemetry export, see src/telemetry). */
  observe?: ObserveRun;
  /**
   * Remote A2A agents every agent may call, one tool each (`a2a_<name>`): a fixed list, or a getter
   * read at the start of each run (the server's: a2a.json and those added in Settings).
   */
  remoteAgents?: readonly RemoteAgentConfig[] | (() => Promise<readonly RemoteAgentConfig[]>);
  /** Tools every agent is offered besides its catalogue, read at the start of each run (the server's HTTP tools saved in Settings). */
  httpTools?: () => Promise<readonly Tool[]>;
}

export interface GrantableTools {
  names: string[];
  create: (agent: AgentRecord, requestedBy: string) => Tool[] | Promise<Tool[]>;
  describe: () => Tool[];
}

/** call_agent as the catalogue shows it (never run: each run gets its own, bound to the run). */
const CALL_AGENT_DESCRIPTOR = createCallAgentTool(
  { getAgent: async () => undefined, listAgentIds: async () => [], runNested: async () => "" },
  {
    channelId: "",
    triggerMessageId: 0,
    parentRunId: "",
    depth: 0,
    chain: [],
    requestedBy: "",
    workspace: "",
  },
);

const STARTERS_KEY = "starter_agents_created";
/** How often runs waiting too long for approvals are looked for. */
const APPROVAL_SWEEP_MS = 60_000;
const MAX_MESSAGE_BYTES = 32 * 1024;
const INTERRUPTED = "interrupted: the server stopped before the run finished";
const COMPLETION_INTERRUPTED =
  "interrupted: the server stopped during this /v1 completion and its client's connection closed with it; the client sends the request again.";

function defaultWorkspaces(home: string): (key: string) => string {
  // Resolving the real path walks every folder above it; remember it while the folder exists.
  const known = new Map<string, string>();
  return (key) => {
    const cached = known.get(key);
    if (cached !== undefined && existsSync(cached)) return cached;
    const dir = join(home, "workspaces", key);
    mkdirSync(dir, { recursive: true });
    const real = realpathSync(dir);
    known.set(key, real);
    return real;
  };
}

/** The remote agents as a getter the runner reads at each run (a fixed list always answers itself). */
function remoteAgentsGetter(
  remotes: NonNullable<TeamDeps["remoteAgents"]>,
): () => Promise<readonly RemoteAgentConfig[]> {
  return typeof remotes === "function" ? remotes : async () => remotes;
}

/**
 * The runs that go on after their process died: chat answers and flow steps (a nested call goes on
 * inside its caller's; a /v1 completion's client went with the process).
 */
function resumable(run: TeamRun): boolean {
  return run.channelId !== "" && run.depth === 0;
}

/** A meeting's turn: the meeting runner, not the restart, decides what becomes of it. */
function isMeetingTurn(stored: StoredRun): boolean {
  return stored.ref.userId.startsWith("meeting:");
}

function fail(message: string): never {
  throw new DimsumError("internal", message);
}

function requireDb(deps: TeamDeps): Database {
  if (!deps.db) throw new DimsumError("internal", "createTeam needs either `db` or `teamStore` and `store`.");
  return deps.db;
}

/** Creates the team over a database; startup work (recovery, starter agents) finishes before any call. */
export function createTeam(deps: TeamDeps): Team {
  const now = deps.now ?? Date.now;
  const onError =
    deps.onError ??
    ((err: unknown) =>
      process.emitWarning(err instanceof Error ? err.message : String(err), "DimsumTeamWarning"));
  const store: TeamStore = deps.teamStore ?? createSqliteTeamStore(requireDb(deps));
  const sessions = deps.store ?? new SqliteSessionStore(requireDb(deps));
  const personas = deps.personas ?? new PersonaFiles(deps.home);
  const members = new MembershipIndex();
  const bus = new EventBus(members, onError);
  const emit = bus.emit.bind(bus);
  const nameOf = namesFrom(deps.userName);
  const grantable = deps.grantableTools;
  const capabilities = new CapabilityAssembly({
    ...deps.capabilities,
    config: deps.config,
    team: {
      describe: () => [CALL_AGENT_DESCRIPTOR, ...(grantable?.describe() ?? [])],
      grantOnly: grantable?.names ?? [],
    },
  });
  for (const problem of capabilities.problems) onError(new Error(problem));
  const roleOf = deps.roleOf;
  const elicitations = new Elicitations({
    emit,
    now,
    ...(deps.elicitationTimeoutMs !== undefined ? { timeoutMs: deps.elicitationTimeoutMs } : {}),
  });
  const runtime: TurnRuntime = {
    elicitations,
    store: sessions,
    config: deps.config,
    personas,
    capabilities,
    // What a person said in the channels they belong to is part of their conversations.
    recallOwners: (userId) => [userId, ...members.channelsOf(userId).map((id) => `channel:${id}`)],
    ...(roleOf
      ? { canReadKnowledge: async (userId: string) => ((await roleOf(userId)) ?? "guest") !== "guest" }
      : {}),
    resolveModel: deps.resolveAgentModel ?? ((agent) => resolveModel(deps.config, agent.model)),
    ...(deps.budgets ? { budgets: new BudgetGuard(deps.budgets) } : {}),
    emit,
    ...(deps.stream ? { stream: deps.stream } : {}),
    ...(deps.streamOptions ? { streamOptions: deps.streamOptions } : {}),
    ...(deps.deltaFrameMs !== undefined ? { deltaFrameMs: deps.deltaFrameMs } : {}),
    fallback: deps.fallback ?? fallbackSettings(deps.config.modelFallback),
    ...(grantable ? { grantedTools: grantable.create } : {}),
    ...(deps.observe ? { observe: deps.observe } : {}),
    ...(deps.capabilities?.processes ? { processes: deps.capabilities.processes } : {}),
    ...(deps.capabilities?.browser ? { browser: deps.capabilities.browser } : {}),
    chatFiles: chatFiles(store.attachments, deps.config.attachments, now),
  };
  // A chat's processes end when it is deleted or archived (see src/tools/process).
  const endProcesses = (channelId: string, why: string) =>
    Promise.all([
      deps.capabilities?.processes?.stopSession(chatProcessKey(channelId), why),
      deps.capabilities?.browser?.close(chatProcessKey(channelId)),
    ]).catch(onError);
  const cluster = deps.cluster;
  const leases = store.leases;
  if (cluster && !leases) {
    throw new DimsumError("config", "Several instances need a shared database with run leases.", {
      hint: "set DIMSUM_DATABASE_URL to a PostgreSQL database on every instance",
    });
  }
  const jobs = cluster && leases ? store.jobs : undefined;
  const runs = new RunManager({
    runs: store.runs,
    emit,
    now,
    onError,
    concurrency: deps.config.runs.concurrency,
    admission: {
      maxLoopDelayMs: deps.config.runs.maxLoopDelayMs,
      maxHeapShare: deps.config.runs.maxHeapShare,
    },
    // Chat answers are jobs any instance claims; the body of a claimed one is built here.
    ...(jobs
      ? {
          jobs: {
            repo: jobs,
            bodyFor: (stored: StoredRun, job: RunJob): RunBody => runner.bodyForJob(stored, job),
          },
        }
      : {}),
    ...(cluster && leases
      ? {
          leasing: {
            leases,
            owner: cluster.instanceId,
            ...(cluster.leaseTtlMs !== undefined ? { ttlMs: cluster.leaseTtlMs } : {}),
            ...(cluster.leaseCheckMs !== undefined ? { checkEveryMs: cluster.leaseCheckMs } : {}),
            // Its answer is kept in the chat with what it did and why it ended.
            onExpired: (stored: StoredRun) =>
              void interruptedFailure(stored, INSTANCE_LOST)
                .then((failure) =>
                  isMeetingTurn(stored) ? undefined : runner.postInterrupted(stored, failure),
                )
                .then(() => sessions.recoverInterruptedRuns(stored.ref))
                // A flow whose step was closed waits for a person, as after a restart.
                .then(() =>
                  stored.run.flowId ? flows.stepLost(stored.run.flowId, stored.run.id) : undefined,
                )
                .catch(onError),
            // A chat answer or flow step whose instance died goes on here from its last checkpoint;
            // a nested call is set aside for its caller's resumed call_agent.
            adopt: async (stored: StoredRun, fence: number) => {
              if (setAside(stored, fence)) return true;
              await takeNested(stored);
              return resumeAfterRestart(stored, fence);
            },
            afterTakeOver: () => void closeOrphans().catch(onError),
          },
        }
      : {}),
  });
  const relay = cluster?.relay
    ? joinRelay(cluster.relay, {
        bus,
        members,
        channels: store.channels,
        cancelRun: (runId, reason) => void runs.cancel(runId, reason),
        answer: (q) =>
          elicitations.has(q.runId, q.id) ? elicitations.answer(q.actor, q.runId, q.id, q.answer) : undefined,
        poll: (p) => elicitations.openFor(p.actor, p.channelId),
        onError,
      })
    : undefined;
  const workspaceFor = deps.workspaceFor ?? defaultWorkspaces(deps.home);
  const apps = new McpApps({
    store,
    runtime,
    workspaceFor,
    liveParts: (runId) => runner.liveParts(runId)?.parts,
    now,
  });
  /** Nested runs a restart or a lost instance cut off, by id: each goes on inside its caller's resumed call. */
  const orphans = new Map<string, { stored: StoredRun; fence?: number }>();
  const runner = new AgentRunner({
    store,
    sessions,
    runs,
    runtime,
    bus,
    now,
    workspaceFor,
    nameOf,
    ...(deps.remoteAgents ? { remoteAgents: remoteAgentsGetter(deps.remoteAgents) } : {}),
    ...(deps.httpTools ? { httpTools: deps.httpTools } : {}),
    shareFileLimits: deps.config.attachments,
    adoptNested: (parentRunId, agentId) => {
      for (const [id, orphan] of orphans) {
        if (orphan.stored.run.parentRunId !== parentRunId || orphan.stored.run.agentId !== agentId) continue;
        orphans.delete(id);
        return orphan.stored;
      }
      return undefined;
    },
    onAnswered: (done): Promise<void> => handoffs.answered(done).catch(onError),
  });
  const handoffs: Handoffs = new Handoffs({
    store,
    now,
    emit,
    maxHandoffs: deps.config.groups.maxHandoffs,
    start: (channel, agent, trigger, requestedBy): Promise<RunHandle> =>
      runner.startChannelRun(channel, agent, trigger, requestedBy),
    cancel: (runId, reason) => runs.cancel(runId, reason),
    onError,
  });
  const approvals = new RunApprovals({
    store,
    sessions,
    runner,
    emit,
    now,
    onError,
    nameOf,
    timeoutMs: deps.config.approvalTimeoutMs,
  });
  const queue = new MessageQueue({
    store,
    runs,
    runner,
    approvals,
    onError,
    collectMs: deps.config.queue.collectMs,
    defaults: deps.config.queue,
  });
  const expiry = setInterval(
    () => void approvals.expire().catch(onError),
    deps.approvalSweepMs ?? APPROVAL_SWEEP_MS,
  );
  expiry.unref();
  const flows = new FlowRunner({
    flows: store.flows,
    emit,
    now,
    launch: runner.launchStep,
    cancelRun: (runId) => runs.cancel(runId, "The flow was stopped."),
    onError,
  });
  const meetingRunner = new MeetingRunner({
    meetings:
      deps.meetings ??
      (deps.db
        ? sqliteMeetings(deps.db)
        : fail(
            "createTeam with `teamStore` needs `meetings` too (postgresMeetings(db) or sqliteMeetings(db))",
          )),
    store,
    launchTurn: (spec) => runner.launchTurn(spec),
    cancelRun: (runId, reason) => runs.cancel(runId, reason),
    emit,
    now,
    nameOf,
    onError,
  });
  const channels = new ChannelService({
    store,
    members,
    bus,
    now,
    onDeleting: async (channelId) => {
      await Promise.all(runs.activeIn(channelId).map((id) => runs.cancel(id, "The channel was deleted.")));
      await endProcesses(channelId, "the chat was deleted");
    },
  });
  const meetings = meetingFacade({
    ready: () => ready,
    store,
    channels,
    meetings: meetingRunner,
    emit,
    now,
    nameOf,
    post: async (actor, channel, text) => postRouted(actor, channel, text, true),
  });
  const agents = new AgentService({
    store,
    personas,
    checkToolNames: (names) => capabilities.checkToolNames(names),
    now,
    onDeleted: (agentId) => channels.dropAgent(agentId),
  });
  const ready = (async () => {
    if (cluster) {
      // Other instances may be running their runs now: only those whose lease ran out are closed.
      await runs.checkLeases();
    } else {
      // This process owns the database: a run still open was the previous process's. An answer in a
      // chat or a flow step goes on from its last checkpoint, a nested call inside its caller's (set
      // aside first, deepest first, for the caller to find); a /v1 completion ends interrupted.
      const open = (await store.runs.listOpen()).sort((a, b) => b.run.depth - a.run.depth);
      for (const stored of open) {
        if (setAside(stored) || (await resumeAfterRestart(stored))) continue;
        const failure = await interruptedFailure(stored, INTERRUPTED);
        const run: TeamRun = { ...stored.run, status: "error", error: failure.message, endedAt: now() };
        await store.runs.update(run);
        // A meeting's turn is spoken again by the meeting (meetingRunner.recover), not posted cut off.
        if (!isMeetingTurn(stored)) await runner.postInterrupted({ ...stored, run }, failure).catch(onError);
        await sessions.recoverInterruptedRuns(stored.ref).catch(onError);
      }
      await closeOrphans();
    }
    // A flow whose step's run goes on (here, or on another instance) is left running.
    await flows.recover(async (runId) => {
      const status = (await store.runs.get(runId))?.run.status;
      return status === "queued" || status === "running" || status === "waiting";
    });
    // Alone on the database, this process goes on with the meetings the previous one left open.
    if (!cluster) await meetingRunner.recover();
    // Claimed first, so of several instances starting together only one creates them.
    if (deps.starterAgents !== false && (await store.meta.claim(STARTERS_KEY, String(now())))) {
      if ((await store.agents.list()).length === 0) {
        for (const input of STARTER_AGENTS) await agents.createUnchecked(input);
      }
    }
    members.load(await store.channels.userMemberships());
  })();
  ready.catch(onError);

  /**
   * Resumes a chat answer the previous process was running, from its checkpoint; false when it is
   * not resumable (not a chat answer, or resumed too often already: `MAX_RESUMES`).
   */
  async function resumeAfterRestart(stored: StoredRun, fence?: number): Promise<boolean> {
    const { run } = stored;
    if (!resumable(run) || run.status !== "running") return false;
    // A meeting's turn cut off by the restart is spoken again by the meeting (meeting-runner.ts).
    if (isMeetingTurn(stored)) return false;
    const key = `run_resumes:${run.id}`;
    const resumes = Number((await store.meta.get(key)) ?? "0");
    if (resumes >= deps.config.runs.maxResumes) return false;
    await store.meta.set(key, String(resumes + 1));
    try {
      // A flow step goes on when its flow still waits for it; the flow then moves to the next step.
      if (run.flowId !== undefined) {
        return await flows.resumeStep(run.flowId, run.id, (flow) =>
          runner.resumeFlowStep(stored, flow, fence),
        );
      }
      await runner.resumeChannelRun(stored, {}, "restart", fence);
      return true;
    } catch (err) {
      onError(err);
      return false;
    }
  }

  /** Sets a nested run that was running aside for its caller (true), when it has one. */
  function setAside(stored: StoredRun, fence?: number): boolean {
    const { run } = stored;
    if (run.depth === 0 || run.parentRunId === undefined || run.status !== "running") return false;
    orphans.set(run.id, fence !== undefined ? { stored, fence } : { stored });
    return true;
  }

  /**
   * Takes over the open nested runs under a run taken over from a dead instance (their leases may
   * run out later than its own) and sets them aside for its resumed calls.
   */
  async function takeNested(stored: StoredRun): Promise<void> {
    if (!cluster || !leases || stored.run.depth !== 0) return;
    const open = (await store.runs.listOpen()).sort((a, b) => a.run.depth - b.run.depth);
    const under = new Set([stored.run.id]);
    for (const child of open) {
      if (child.run.parentRunId === undefined || !under.has(child.run.parentRunId)) continue;
      under.add(child.run.id);
      const until = now() + (cluster.leaseTtlMs ?? 30_000);
      setAside(child, await leases.acquire(child.run.id, cluster.instanceId, until));
    }
  }

  /**
   * Closes, as interrupted, the nested runs set aside whose caller does not go on here; those whose
   * caller runs here are closed once it ends, if its resumed call did not take them.
   */
  async function closeOrphans(): Promise<void> {
    for (;;) {
      const lost = [...orphans.values()].filter(({ stored }) => {
        const parent = stored.run.parentRunId ?? "";
        return !runs.isActive(parent) && !orphans.has(parent);
      });
      if (lost.length === 0) break;
      for (const orphan of lost) {
        orphans.delete(orphan.stored.run.id);
        await closeInterrupted(orphan.stored, orphan.fence);
      }
    }
    for (const { stored } of orphans.values()) {
      const parent = stored.run.parentRunId ?? "";
      if (runs.isActive(parent)) void runs.settled(parent).then(() => closeOrphans().catch(onError));
    }
  }

  /** Ends a run whose process died and that does not go on (where leased, while `fence` holds). */
  async function closeInterrupted(stored: StoredRun, fence?: number): Promise<void> {
    const run: TeamRun = {
      ...stored.run,
      status: "error",
      error: cluster ? INSTANCE_LOST : INTERRUPTED,
      endedAt: now(),
    };
    if (leases && fence !== undefined) {
      if (!(await leases.updateFenced(run, fence))) return;
    } else {
      await store.runs.update(run);
    }
    emit({ type: "run", channelId: run.channelId, run });
    await sessions.recoverInterruptedRuns(stored.ref).catch(onError);
  }

  /**
   * Why a run whose process died ends here: given up after `runs.maxResumes` resumes, or `otherwise`
   * (a kind of run that does not resume).
   */
  async function interruptedFailure(
    stored: StoredRun,
    otherwise: string,
  ): Promise<{ message: string; hint?: string }> {
    // A /v1 completion's client connection closed with the process: nobody is left to answer.
    if (stored.run.channelId === "") return { message: COMPLETION_INTERRUPTED };
    const resumes = Number((await store.meta.get(`run_resumes:${stored.run.id}`)) ?? "0");
    const max = deps.config.runs.maxResumes;
    if (!resumable(stored.run) || resumes < max) return { message: otherwise };
    return {
      message: `interrupted: the server stopped ${resumes + 1} times during this answer, so it was given up after ${resumes} resumes (runs.maxResumes is ${max}).`,
      hint: "ask again; raise runs.maxResumes in config.json to resume answers more often",
    };
  }

  async function visibleRun(actor: Actor, runId: string): Promise<StoredRun> {
    const stored = await store.runs.get(runId);
    // A run the caller may not see does not exist for them: the same 404, naming nothing.
    const missing = () => notFound(`No run with id "${runId}".`);
    if (!stored) throw missing();
    if (stored.run.channelId === "") {
      if (!isAdmin(actor) && stored.requestedBy !== actor.userId) throw missing();
    } else if (!(await channelVisible(actor, stored.run.channelId))) {
      throw missing();
    }
    return stored;
  }

  /** Whether the channel exists and the actor may see it. */
  async function channelVisible(actor: Actor, channelId: string): Promise<boolean> {
    const channel = await store.channels.get(channelId);
    return channel !== undefined && canSeeChannel(actor, channel);
  }

  /** The flow if the actor may see its channel; otherwise the same 404 as a missing flow. */
  async function visibleFlow(actor: Actor, flowId: string) {
    const flow = await flows.get(flowId);
    if (!(await channelVisible(actor, flow.channelId))) throw notFound(`No flow with id "${flowId}".`);
    return flow;
  }

  /** The agent with what its model reads besides text, when its model resolves and is known. */
  async function withModelInput(agent: AgentRecord): Promise<AgentRecord> {
    const model = await Promise.resolve()
      .then(() => runtime.resolveModel(agent))
      .catch(() => undefined);
    if (!model?.input) return agent;
    return { ...agent, modelInput: { model: `${model.provider}:${model.id}`, ...model.input } };
  }

  /** The attachment parts of a post: files uploaded to this chat, at most the limit. */
  async function attachedParts(channelId: string, ids: readonly string[]): Promise<MessagePart[]> {
    checkFileCount(ids.length, deps.config.attachments);
    const parts: MessagePart[] = [];
    for (const id of ids) {
      const meta = await store.attachments.meta(channelId, id);
      if (!meta) throw invalid(`No file ${id} was uploaded to this chat.`, "upload it again, then send");
      parts.push({ type: "attachment", ...meta });
    }
    return parts;
  }

  async function postRouted(
    actor: Actor,
    channel: ChannelRecord,
    text: string,
    present: boolean,
    mode?: QueueMode,
    scheduled?: { scheduleId: string; name: string },
    files: MessagePart[] = [],
    messenger?: { platform: string; name: string },
  ): Promise<PostResult> {
    const records = new Map((await store.agents.list()).map((a) => [a.id, a]));
    const route = routeMessage(text, channel, records, await nameOf(peopleIn(channel)));
    // During a meeting a message that names no agent is said in the meeting (the next speaker reads it).
    const interjection = route.kind === "agents" && (await meetings.interjection(channel, text, records));
    const targets = route.kind === "agents" && !interjection ? route.agents : [];
    const at = now();
    // The author has read their own post: stored with their marker moved to it, in one write.
    const message = await store.messages.insert(
      {
        channelId: channel.id,
        author: { type: "user", id: actor.userId },
        text,
        ...(scheduled || messenger || files.length > 0
          ? {
              parts: [
                { type: "text", text },
                ...(scheduled ? [{ type: "scheduled" as const, ...scheduled }] : []),
                ...(messenger ? [{ type: "messenger" as const, ...messenger }] : []),
                ...files,
              ] satisfies MessagePart[],
            }
          : {}),
        mentions: targets.map((a) => a.id),
        createdAt: at,
      },
      { readBy: actor.userId },
    );
    emit({ type: "message", channelId: channel.id, message });
    if (route.kind === "flow") {
      const flow = await flows.start(channel.id, message.id, channel.chain, route.input);
      const stepRun = flow.steps[flow.currentStep]?.runId;
      const started = stepRun ? (await store.runs.get(stepRun))?.run : undefined;
      return { message, runs: started ? [started] : [], flow };
    }
    const started: TeamRun[] = [];
    const queued: QueuedFor[] = [];
    for (const agent of targets) {
      const outcome = await queue.deliver(channel, agent, message, actor.userId, present, mode);
      if ("run" in outcome) started.push(outcome.run);
      else queued.push(outcome.queued);
    }
    return queued.length > 0 ? { message, runs: started, queued } : { message, runs: started };
  }

  function checkText(text: unknown): asserts text is string {
    if (typeof text !== "string" || text.trim() === "") throw invalid("A message needs some text.");
    if (Buffer.byteLength(text) > MAX_MESSAGE_BYTES) {
      throw invalid(
        `A message is limited to ${MAX_MESSAGE_BYTES / 1024} KB.`,
        "attach long text as a file instead",
      );
    }
  }

  async function requireMessage(messageId: number): Promise<ChannelMessage> {
    const message = Number.isInteger(messageId) ? await store.messages.get(messageId) : undefined;
    if (!message) throw notFound(`No message with id ${messageId}.`);
    return message;
  }

  /** Starts a new answer of `agentId` to `trigger`, as a new version of the answer `versionOf`. */
  async function answerAgain(
    actor: Actor,
    channel: ChannelRecord,
    trigger: ChannelMessage,
    agentId: string,
    versionOf: number,
    note: string,
  ): Promise<TeamRun> {
    if (!channel.members.some((m) => m.type === "agent" && m.id === agentId)) {
      throw invalid(`@${agentId} is no longer in this channel.`, "add the agent again to get a new answer");
    }
    const agent = await agents.require(agentId);
    return (
      await runner.startChannelRun(channel, agent, trigger, actor.userId, { versionOf, note, present: true })
    ).run;
  }

  /** The chat shows a step's output as edited: the step's message text becomes the new output. */
  async function showEditedOutput(actor: Actor, flow: FlowRecord, stepIndex: number): Promise<void> {
    const step = flow.steps[stepIndex];
    if (!step?.runId || step.output === undefined) return;
    const posted = await store.messages.byRun(step.runId);
    if (!posted || posted.text === step.output) return;
    // Tool calls and reasoning stay; the text is what was edited, and by whom.
    const name = (await nameOf([actor.userId]))(actor.userId);
    const parts: MessagePart[] = [
      ...posted.parts.filter((p) => p.type !== "text" && p.type !== "edited"),
      { type: "text", text: step.output },
      { type: "edited", by: actor.userId, name },
    ];
    const message = await store.messages.edit(posted.id, step.output, now(), parts);
    if (message) emit({ type: "message", channelId: flow.channelId, message });
  }

  const team: Team = {
    async listTools(actor) {
      await ready;
      assertNotGuest(actor, "list the tools agents can use");
      await capabilities.ready();
      return capabilities.catalogue();
    },
    async listAgents() {
      await ready;
      return Promise.all((await agents.list()).map(withModelInput));
    },
    async getAgent(_actor, id) {
      await ready;
      return withModelInput(await agents.get(id));
    },
    attachmentLimits: () => deps.config.attachments,
    async createAgent(actor, input) {
      await ready;
      return withModelInput(await agents.create(actor, input));
    },
    async updateAgent(actor, id, patch) {
      await ready;
      return withModelInput(await agents.update(actor, id, patch));
    },
    async deleteAgent(actor, id) {
      await ready;
      return agents.delete(actor, id);
    },
    async getSoul(actor, id) {
      await ready;
      return agents.getSoul(actor, id);
    },
    async putSoul(actor, id, content) {
      await ready;
      return agents.putSoul(actor, id, content);
    },

    async listChannels(actor) {
      await ready;
      return channels.list(actor);
    },
    async setChannelPrefs(actor, id, patch) {
      await ready;
      const prefs = await channels.setPrefs(actor, id, patch);
      if (patch.archived === true) await endProcesses(id, "the chat was archived");
      return prefs;
    },
    async titleChannel(actor, id) {
      await ready;
      const channel = await channels.visible(actor, id);
      if (channel.kind !== "direct") throw invalid("Only a direct chat is named after its first exchange.");
      const first = await store.messages.list(id, { limit: 6, after: 0 });
      const question = first.find((m) => m.author.type === "user");
      const answer = first.find((m) => m.author.type === "agent" && m.text.trim() !== "");
      if (!question) throw conflict("The chat has no message yet to name it after.", "send a message first");
      const agent = channel.leaderAgentId ? await store.agents.get(channel.leaderAgentId) : undefined;
      const model = agent
        ? await Promise.resolve()
            .then(() => runtime.resolveModel(agent))
            .catch(() => undefined)
        : undefined;
      const name = await chatTitle(question.text, answer?.text, model, {
        ...(deps.stream ? { stream: deps.stream } : {}),
        ...(deps.streamOptions ? { streamOptions: deps.streamOptions } : {}),
      });
      return channels.update(actor, id, { name });
    },
    async getChannel(actor, id) {
      await ready;
      return channels.visible(actor, id);
    },
    async createChannel(actor, input) {
      await ready;
      return channels.create(actor, input);
    },
    async updateChannel(actor, id, patch) {
      await ready;
      return channels.update(actor, id, patch);
    },
    async deleteChannel(actor, id) {
      await ready;
      return channels.delete(actor, id);
    },
    async addMember(actor, channelId, member) {
      await ready;
      return channels.addMember(actor, channelId, member);
    },
    async removeMember(actor, channelId, member) {
      await ready;
      return channels.removeMember(actor, channelId, member);
    },
    async setChain(actor, channelId, steps) {
      await ready;
      return channels.setChain(actor, channelId, steps);
    },

    async listMessages(actor, channelId, options) {
      await ready;
      return channels.messages(actor, channelId, options);
    },
    async markRead(actor, channelId, messageId) {
      await ready;
      return channels.markRead(actor, channelId, messageId);
    },
    async postMessage(actor, channelId, text, options = {}) {
      await ready;
      const channel = await channels.visible(actor, channelId);
      checkText(text);
      const files = await attachedParts(channel.id, options.attachments ?? []);
      const opened = await meetings.fromMessage(
        actor,
        channel,
        text,
        files.length > 0 ? [{ type: "text", text }, ...files] : undefined,
      );
      if (opened) return opened;
      return postRouted(
        actor,
        channel,
        text,
        options.present === true,
        options.mode,
        options.scheduled,
        files,
        options.messenger,
      );
    },
    async uploadAttachment(actor, channelId, name, data) {
      await ready;
      const channel = await channels.visible(actor, channelId);
      assertNotGuest(actor, "attach files");
      const clean = cleanFileName(name);
      const file = attachBytes(data, clean, deps.config.attachments);
      const id = createHash("sha256").update(data).digest("hex");
      return store.attachments.put(
        { id, mimeType: file.mimeType, kind: file.kind, data },
        { channelId: channel.id, name: clean, by: actor.userId, at: now() },
      );
    },
    async readAttachment(actor, channelId, id) {
      await ready;
      // Someone who may not read the chat learns nothing, not even that the chat exists.
      const channel = await channels.visible(actor, channelId).catch(() => undefined);
      const found = channel ? await store.attachments.read(channel.id, id) : undefined;
      if (!found) throw notFound("No such file in this chat.");
      return found;
    },
    async mcpAppResource(actor, ref) {
      await ready;
      return apps.resource(actor, ref);
    },
    async mcpAppCall(actor, ref, name, args) {
      await ready;
      return apps.call(actor, ref, name, args);
    },
    async mcpAppDecide(actor, ref, approvalId, decision) {
      await ready;
      return apps.decide(actor, ref, approvalId, decision);
    },
    async deleteMessage(actor, messageId) {
      await ready;
      return channels.deleteMessage(actor, messageId);
    },
    async regenerate(actor, messageId) {
      await ready;
      const answer = await requireMessage(messageId);
      const channel = await channels.visible(actor, answer.channelId);
      if (answer.author.type !== "agent" || answer.replyTo === undefined) {
        throw invalid("Only an agent's answer to a message can be regenerated.", "send the question again");
      }
      const trigger = await requireMessage(answer.replyTo);
      const run = await answerAgain(
        actor,
        channel,
        trigger,
        answer.author.id,
        answer.versionOf ?? answer.id,
        "(The person asked for another answer to this message; answer it afresh.)",
      );
      return { message: trigger, runs: [run] };
    },
    async editMessage(actor, messageId, text) {
      await ready;
      const original = await requireMessage(messageId);
      const channel = await channels.visible(actor, original.channelId);
      if (original.author.type !== "user" || original.author.id !== actor.userId) {
        throw forbidden("Only the author can edit a message.");
      }
      checkText(text);
      const later = await store.messages.list(channel.id, { after: original.id, limit: 200 });
      if (later.some((m) => m.author.type === "user" && m.author.id === actor.userId)) {
        throw conflict("Only your last message can be edited.", "send a new message instead");
      }
      const records = new Map((await store.agents.list()).map((a) => [a.id, a]));
      const names = await nameOf(peopleIn(channel));
      if (
        routeMessage(original.text, channel, records, names).kind === "flow" ||
        routeMessage(text, channel, records, names).kind === "flow"
      ) {
        throw conflict("A message that starts a flow cannot be edited.", "start the flow again with /flow");
      }
      // The new text replaces the old; the files attached (and a schedule's mark) stay with it.
      const kept = original.parts.filter((p) => p.type !== "text");
      const parts = kept.length > 0 ? [{ type: "text" as const, text }, ...kept] : undefined;
      const message = await store.messages.edit(original.id, text, now(), parts);
      if (!message) throw notFound(`No message with id ${messageId}.`);
      emit({ type: "message", channelId: channel.id, message });
      const heads = new Map<string, number>();
      for (const reply of await store.messages.replies(message.id)) {
        if (reply.author.type === "agent" && !heads.has(reply.author.id)) {
          heads.set(reply.author.id, reply.versionOf ?? reply.id);
        }
      }
      const started: TeamRun[] = [];
      const note = "(The person edited this message; answer the edited version.)";
      for (const [agentId, head] of heads) {
        started.push(await answerAgain(actor, channel, message, agentId, head, note));
      }
      if (heads.size === 0) {
        const route = routeMessage(text, channel, records, names);
        for (const agent of route.kind === "agents" ? route.agents : []) {
          started.push(
            (await runner.startChannelRun(channel, agent, message, actor.userId, { present: true })).run,
          );
        }
      }
      return { message, runs: started };
    },
    async searchMessages(actor, query, options) {
      await ready;
      return channels.search(actor, query, options);
    },

    async listChannelRuns(actor, channelId) {
      await ready;
      await channels.visible(actor, channelId);
      return (await store.runs.listUsage({ since: 0, channelId })).map((s) => s.run);
    },
    async spend(actor, options) {
      await ready;
      const since = sinceDays(Date.now(), options.days);
      const all = isAdmin(actor);
      const stored = await store.runs.listUsage(all ? { since } : { since, requestedBy: actor.userId });
      return spendReport(
        stored.map((s) => s.run),
        since,
        all ? "all" : "own",
      );
    },
    async getRun(actor, runId) {
      await ready;
      const stored = await visibleRun(actor, runId);
      if (stored.run.status === "waiting") {
        return { ...stored.run, pendingApprovals: await approvals.pending(stored) };
      }
      const live = runs.snapshot(runId);
      if (!live) return stored.run;
      const parts = runner.liveParts(runId);
      return parts ? { ...live, live: parts } : live;
    },
    runQueue(actor) {
      if (!isAdmin(actor)) throw forbidden("Only owners and admins can see the run queue.", "ask an admin");
      return runs.queueStats();
    },
    async cancelRun(actor, runId) {
      await ready;
      const stored = await visibleRun(actor, runId);
      const reason = `Cancelled by ${(await nameOf([actor.userId]))(actor.userId)}.`;
      runner.dropUnread(runId);
      // A person's Stop ends the hand-off chain the run belongs to.
      if (stored.run.depth === 0 && stored.run.channelId !== "") await handoffs.stopped(stored.run, reason);
      const cancelled = await runs.cancel(runId, reason);
      if (cancelled) return cancelled;
      if (stored.run.status === "waiting")
        return (await approvals.cancelWaiting(stored, reason)) ?? stored.run;
      // Live on another instance: that one cancels it and announces the end.
      if (cluster?.relay && (stored.run.status === "queued" || stored.run.status === "running")) {
        cluster.relay.publish({ type: "cancel_run", runId, reason });
      }
      return stored.run;
    },
    async getRunTrace(actor, runId) {
      await ready;
      const stored = await visibleRun(actor, runId);
      return (await sessions.getRunEvents(stored.ref, runId)).map((e) => e.payload);
    },

    ...meetings.methods,
    async getFlow(actor, flowId) {
      await ready;
      return visibleFlow(actor, flowId);
    },
    async flowAction(actor, flowId, action) {
      await ready;
      const flow = await visibleFlow(actor, flowId);
      assertCanManage(actor, await channels.require(flow.channelId));
      const next = await flows.act(flowId, action);
      if (action.action === "edit") await showEditedOutput(actor, next, action.stepIndex);
      return next;
    },

    async complete(actor, agentId, messages, options = {}) {
      await ready;
      assertNotGuest(actor, "talk to agents through the API");
      const agent = await agents.require(agentId);
      const last = messages.at(-1);
      if (last?.role !== "user") throw invalid("The conversation must end with a user message.");
      if (typeof last.content === "string" ? last.content.trim() === "" : last.content.length === 0) {
        throw invalid("The last user message is empty; send some text.");
      }
      const system = messages.flatMap((m) => (m.role === "system" ? [m.content] : []));
      const history = messages.slice(0, -1).filter((m) => m.role !== "system");
      return runner.complete(actor.userId, agent, system, history, last.content, options);
    },

    subscribe(actor, listener, options) {
      return bus.subscribe(actor, listener, options);
    },
    async answerApproval(actor, runId, callId, answer) {
      await ready;
      const stored = await visibleRun(actor, runId);
      return approvals.answer(actor, stored, callId, answer);
    },
    async listApprovalGrants(actor, channelId) {
      await ready;
      const channel = await channels.visible(actor, channelId);
      return store.grants.list(channel.id);
    },
    async revokeApprovalGrant(actor, channelId, agentId, tool) {
      await ready;
      const channel = await channels.visible(actor, channelId);
      const grant = (await store.grants.list(channel.id)).find(
        (g) => g.agentId === agentId && g.tool === tool,
      );
      if (!grant) throw notFound(`@${agentId} has no standing approval for ${tool} in this chat.`);
      if (grant.grantedBy !== actor.userId) assertCanManage(actor, channel);
      await store.grants.delete(channel.id, agentId, tool);
    },
    async answerElicitation(actor, runId, id, answer) {
      await ready;
      // Asked by a run on another instance: that instance holds the request.
      if (relay && !elicitations.has(runId, id))
        return relay.ask({ kind: "answer_elicitation", actor, runId, id, answer });
      return elicitations.answer(actor, runId, id, answer);
    },
    async listElicitations(actor, channelId) {
      await ready;
      await channels.visible(actor, channelId);
      const here = elicitations.openFor(actor, channelId);
      if (!relay || !leases || !cluster) return here;
      // Runs of this channel that other instances hold may be waiting for this person too.
      const others = (await leases.ownersIn(channelId)).filter((owner) => owner !== cluster.instanceId);
      return [...here, ...(await relay.gather({ kind: "list_elicitations", actor, channelId }, others))];
    },
    async close() {
      await ready.catch(() => undefined);
      clearInterval(expiry);
      queue.close();
      const flowsClosed = flows.close();
      const meetingsClosed = meetingRunner.close();
      await runs.cancelAll("The server is shutting down.");
      await flowsClosed;
      await meetingsClosed;
      relay?.leave();
    },
  };
  return team;
}
