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
import { conflict, DimsumError, invalid } from "../errors.js";
import { fallbackSettings } from "../llm/fallback-chain.js";
import { SqliteSessionStore } from "../store/sqlite-session-store.js";
import { chatProcessKey } from "../tools/process/process-manager.js";
import { assertNotGuest } from "./access.js";
import { createAgentRunner } from "./agent-runner.js";
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
import { MessageQueue } from "./message-queue.js";
import { PersonaFiles } from "./personas.js";
import { RunApprovals } from "./run-approvals.js";
import { INSTANCE_LOST, type RunBody, type RunHandle, RunManager } from "./run-manager.js";
import { viewerLookup } from "./run-visibility.js";
import { STARTER_AGENTS } from "./starter-agents.js";
import { sqliteMeetings } from "./store/meeting-repo.js";
import type { TeamDeps } from "./team-deps.js";
import { messageSide } from "./team-messages.js";
import { type TeamParts, whenReady } from "./team-parts.js";
import { namesFrom } from "./team-prompt.js";
import { joinRelay } from "./team-relay.js";
import { runSide } from "./team-runs.js";
import { createSqliteTeamStore, type RunJob, type StoredRun, type TeamStore } from "./team-store.js";
import type { AgentRecord, Team, TeamRun } from "./types.js";

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

  /** The agent with what its model reads besides text, when its model resolves and is known. */
  async function withModelInput(agent: AgentRecord): Promise<AgentRecord> {
    const model = await Promise.resolve()
      .then(() => runtime.resolveModel(agent))
      .catch(() => undefined);
    if (!model?.input) return agent;
    return { ...agent, modelInput: { model: `${model.provider}:${model.id}`, ...model.input } };
  }

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
    async listTools(actor) {
      await ready;
      assertNotGuest(actor, "list the tools agents can use");
      await capabilities.ready();
      return capabilities.catalogue(actor);
    },
    async listAgents(actor) {
      await ready;
      return Promise.all((await agents.list(actor)).map(withModelInput));
    },
    getAgent: whenReady(ready, async (actor, id) => withModelInput(await agents.get(id, actor))),
    attachmentLimits: () => deps.config.attachments,
    createAgent: whenReady(ready, async (actor, input) => withModelInput(await agents.create(actor, input))),
    updateAgent: whenReady(ready, async (actor, id, patch) =>
      withModelInput(await agents.update(actor, id, patch)),
    ),
    deleteAgent: whenReady(ready, (actor, id) => agents.delete(actor, id)),
    getSoul: whenReady(ready, (actor, id) => agents.getSoul(actor, id)),
    putSoul: whenReady(ready, (actor, id, content) => agents.putSoul(actor, id, content)),

    listChannels: whenReady(ready, (actor) => channels.list(actor)),
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
    getChannel: whenReady(ready, (actor, id) => channels.visible(actor, id)),
    createChannel: whenReady(ready, (actor, input) => channels.create(actor, input)),
    updateChannel: whenReady(ready, (actor, id, patch) => channels.update(actor, id, patch)),
    deleteChannel: whenReady(ready, (actor, id) => channels.delete(actor, id)),
    addMember: whenReady(ready, (actor, channelId, member) => channels.addMember(actor, channelId, member)),
    removeMember: whenReady(ready, (actor, channelId, member) =>
      channels.removeMember(actor, channelId, member),
    ),
    setChain: whenReady(ready, (actor, channelId, steps) => channels.setChain(actor, channelId, steps)),

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
