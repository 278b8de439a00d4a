/**
 * The team facade: the composition root of the team domain and the one object the HTTP/WebSocket edge
 * talks to. It checks access, routes messages to agents (mentions, @all, leader, flows) and wires the
 * runs, flows and events together.
 */

import { existsSync, mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import type { Database } from "better-sqlite3";
import type { RemoteAgentConfig } from "../a2a/remote-config.js";
import { CapabilityAssembly } from "../capabilities/index.js";
import { resolveModel } from "../config/resolve-model.js";
import { DimsumError } from "../errors.js";
import { fallbackSettings } from "../llm/fallback-chain.js";
import { SqliteSessionStore } from "../store/sqlite-session-store.js";
import { chatProcessKey } from "../tools/process/process-manager.js";
import { createAgentRunner } from "./agent-runner.js";
import { AgentService } from "./agent-service.js";
import type { TurnRuntime } from "./agent-turn.js";
import { BudgetGuard } from "./budget-guard.js";
import { createCallAgentTool } from "./call-agent-tool.js";
import { ChannelService } from "./channel-service.js";
import { chatFiles } from "./chat-files.js";
import { Elicitations } from "./elicitations.js";
import { EventBus, MembershipIndex } from "./event-bus.js";
import { FlowRunner } from "./flow-runner.js";
import { Handoffs } from "./handoffs.js";
import { McpApps } from "./mcp-apps.js";
import { meetingFacade } from "./meeting-facade.js";
import { MeetingRunner } from "./meeting-runner.js";
import { MessageQueue } from "./message-queue.js";
import { PersonaFiles } from "./personas.js";
import { RunApprovals } from "./run-approvals.js";
import { type RunBody, type RunHandle, RunManager } from "./run-manager.js";
import { viewerLookup } from "./run-visibility.js";
import { STARTER_AGENTS } from "./starter-agents.js";
import { sqliteMeetings } from "./store/meeting-repo.js";
import type { TeamDeps } from "./team-deps.js";
import { directorySide } from "./team-directory.js";
import { messageSide } from "./team-messages.js";
import type { TeamParts } from "./team-parts.js";
import { namesFrom } from "./team-prompt.js";
import { teamRecovery } from "./team-recovery.js";
import { joinRelay } from "./team-relay.js";
import { runSide } from "./team-runs.js";
import { createSqliteTeamStore, type RunJob, type StoredRun, type TeamStore } from "./team-store.js";
import type { Team } from "./types.js";

export type { GrantableTools, TeamDeps } from "./team-deps.js";

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
    viewerOf: viewerLookup(roleOf),
    recallOwners: (userId) => [userId, ...members.channelsOf(userId).map((id) => `channel:${id}`)],
    ...(roleOf
      ? { canReadKnowledge: async (userId: string) => ((await roleOf(userId)) ?? "guest") !== "guest" }
      : {}),
    resolveModel: deps.resolveAgentModel ?? ((agent) => resolveModel(deps.config, agent.model)),
    ...(deps.budgets
      ? {
          budgets: new BudgetGuard(deps.budgets, (notice) =>
            emit({ type: "budget_notice", channelId: `budget:${notice.budgetId}`, notice }),
          ),
        }
      : {}),
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
  const recovery = teamRecovery({
    store,
    sessions,
    emit,
    now,
    onError,
    maxResumes: deps.config.runs.maxResumes,
    cluster,
    leases,
    wired: () => ({ runs, runner, flows }),
  });
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
            onExpired: recovery.onLeaseExpired,
            adopt: recovery.adopt,
            afterTakeOver: recovery.afterTakeOver,
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
  const runner = createAgentRunner({
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
    adoptNested: recovery.adoptNested,
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
    ...(roleOf ? { roleOf: async (id: string) => roleOf(id) } : {}),
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
    post: async (actor, channel, text) => messages.postRouted(actor, channel, text, true),
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
      await recovery.recoverOpenRuns();
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

  const parts: TeamParts = {
    deps,
    ready,
    store,
    sessions,
    bus,
    emit,
    now,
    nameOf,
    runtime,
    runs,
    runner,
    handoffs,
    approvals,
    queue,
    flows,
    channels,
    agents,
    meetings,
    apps,
    elicitations,
    relay,
    cluster,
    leases,
  };
  const messages = messageSide(parts);
  const team: Team = {
    ...directorySide(parts, { capabilities, endProcesses }),
    ...messages.methods,
    ...runSide(parts),
    ...meetings.methods,

    subscribe(actor, listener, options) {
      return bus.subscribe(actor, listener, options);
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
