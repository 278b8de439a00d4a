/**
 * Two team instances on one PostgreSQL database and one Redis: what one runs, the other's
 * subscribers see as it happens; membership and cancel requests cross over; a run whose instance
 * stops renewing its lease is closed by the other, and the old owner's writes are refused.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadExtensions } from "../../src/capabilities/extensions.js";
import { loadConfig } from "../../src/config/load-config.js";
import type { PgDatabase } from "../../src/store/postgres/pg-database.js";
import { PgSessionStore } from "../../src/store/postgres/pg-session-store.js";
import { type MessageRelay, openRedisRelay } from "../../src/store/redis/redis-relay.js";
import { STARTER_AGENTS } from "../../src/team/starter-agents.js";
import { postgresMeetings } from "../../src/team/store/meeting-repo.js";
import { PgRunJobRepo } from "../../src/team/store/postgres/job-repo.js";
import { PgPersonaStore } from "../../src/team/store/postgres/persona-store.js";
import { createTeam } from "../../src/team/team.js";
import type { TeamRelayMessage } from "../../src/team/team-relay.js";
import { createPostgresTeamStore } from "../../src/team/team-store.js";
import type { Actor, Team, TeamEvent, TeamRun } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { openTestPostgres, postgresAvailable } from "../support/postgres.js";
import { REDIS_URL, redisAvailable, testChannel } from "../support/redis.js";

const owner: Actor = { userId: "olivia", role: "owner" };
const alice: Actor = { userId: "alice", role: "member" };

interface Instance {
  team: Team;
  relay: MessageRelay<TeamRelayMessage>;
  events: TeamEvent[];
  /** The first event (seen or to come) passing the test. */
  waitFor(test: (e: TeamEvent) => boolean, timeoutMs?: number): Promise<TeamEvent>;
}

describe.skipIf(!postgresAvailable || !redisAvailable)("two team instances on PostgreSQL and Redis", () => {
  let server: FakeLlmServer;
  let db: PgDatabase & { dispose(): Promise<void> };
  const homes: string[] = [];
  const instances: Instance[] = [];
  let channel: string;

  beforeAll(async () => {
    server = await startFakeLlmServer({ defaultTurn: () => ({ text: "hello from the other side" }) });
  });
  afterAll(async () => {
    await server.close();
  });
  afterEach(async () => {
    for (const instance of instances.splice(0)) {
      await instance.team.close();
      await instance.relay.close();
    }
    await db?.dispose();
    for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
  });

  async function start(
    options: {
      leaseTtlMs?: number;
      leaseCheckMs?: number;
      watch?: Actor;
      concurrency?: number;
      /** A plugin file (`tools/<name>.mjs` in the instance's home) the agents get. */
      plugin?: { name: string; source: string };
    } = {},
  ): Promise<Instance> {
    const home = mkdtempSync(join(tmpdir(), "dimsum-cluster-"));
    homes.push(home);
    if (options.plugin) {
      mkdirSync(join(home, "tools"), { recursive: true });
      writeFileSync(join(home, "tools", `${options.plugin.name}.mjs`), options.plugin.source);
    }
    const config = loadConfig({
      cwd: home,
      env: {
        DIMSUM_HOME: home,
        DIMSUM_MODEL: "openai:gpt-test",
        OPENAI_API_KEY: "sk-test-key-1234",
        OPENAI_BASE_URL: `${server.url}/v1`,
      },
    });
    // Each message gets a run of its own here; the queue modes have their own tests.
    config.queue = { ...config.queue, group: "followup" };
    if (options.concurrency !== undefined) config.runs = { ...config.runs, concurrency: options.concurrency };
    const extensions = options.plugin ? await loadExtensions(config, home) : undefined;
    const relay = await openRedisRelay<TeamRelayMessage>(REDIS_URL, { channel });
    const team = createTeam({
      home,
      config,
      teamStore: createPostgresTeamStore(db),
      store: new PgSessionStore(db),
      personas: new PgPersonaStore(db),
      meetings: postgresMeetings(db),
      streamOptions: { retry: { maxRetries: 0 } },
      ...(extensions ? { capabilities: { extensions } } : {}),
      cluster: {
        instanceId: relay.instanceId,
        relay,
        ...(options.leaseTtlMs !== undefined ? { leaseTtlMs: options.leaseTtlMs } : {}),
        ...(options.leaseCheckMs !== undefined ? { leaseCheckMs: options.leaseCheckMs } : {}),
      },
    });
    const events: TeamEvent[] = [];
    let waiters: Array<{ test: (e: TeamEvent) => boolean; resolve: (e: TeamEvent) => void }> = [];
    team.subscribe(options.watch ?? owner, (event) => {
      events.push(event);
      waiters = waiters.filter((w) => {
        if (!w.test(event)) return true;
        w.resolve(event);
        return false;
      });
    });
    const instance: Instance = {
      team,
      relay,
      events,
      waitFor(test, timeoutMs = 10_000) {
        const seen = events.find(test);
        if (seen) return Promise.resolve(seen);
        return new Promise((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error("timed out waiting for an event")), timeoutMs);
          waiters.push({
            test,
            resolve: (e) => {
              clearTimeout(timer);
              resolve(e);
            },
          });
        });
      },
    };
    instances.push(instance);
    await team.listAgents(owner);
    return instance;
  }

  const ended = (runId: string) => (e: TeamEvent) =>
    e.type === "run" && e.run.id === runId && ["done", "error", "cancelled"].includes(e.run.status);

  async function setUp() {
    db = await openTestPostgres();
    channel = testChannel();
    server.reset();
  }

  it("streams a run posted on A to B's subscribers: deltas in order, lifecycle, the answer", async () => {
    await setUp();
    const a = await start();
    const b = await start();
    // Both started on the same database: the starter agents were created once, with their personas.
    const agents = await b.team.listAgents(owner);
    expect(agents.map((x) => x.id).sort()).toEqual(STARTER_AGENTS.map((x) => x.id).sort());
    expect(agents.every((x) => x.soulStatus === "ok")).toBe(true);
    const room = await a.team.createChannel(owner, {
      kind: "group",
      name: "ops",
      agentIds: ["writer"],
      userIds: [],
    });
    server.enqueue({ text: "one two three four five six seven eight" });
    const posted = await a.team.postMessage(owner, room.id, "@writer count");
    const runId = posted.runs[0]!.id;
    const onA = (await a.waitFor(ended(runId))) as { run: TeamRun };
    const onB = (await b.waitFor(ended(runId))) as { run: TeamRun };
    expect(onA.run.status).toBe("done");
    expect(onB.run).toEqual(onA.run);
    const text = (i: Instance) =>
      i.events
        .flatMap((e) =>
          e.type === "agent" && e.runId === runId && e.event.type === "text_delta" ? [e.event.text] : [],
        )
        .join("");
    expect(text(b)).toBe("one two three four five six seven eight");
    const seqs = (i: Instance) =>
      i.events.flatMap((e) => (e.type === "agent" && e.runId === runId ? [e.seq] : []));
    expect(seqs(b)).toEqual(seqs(a));
    expect(seqs(b)).toEqual([...seqs(b)].sort((x, y) => x - y));
    const statuses = b.events.flatMap((e) => (e.type === "run" && e.run.id === runId ? [e.run.status] : []));
    expect(statuses).toEqual(["queued", "running", "done"]);
    await b.waitFor((e) => e.type === "message" && e.message.runId === runId);
    // Both read the same history from the database.
    expect(await b.team.listMessages(owner, room.id)).toEqual(await a.team.listMessages(owner, room.id));
  });

  it("routes a channel's events to a person added to it on the other instance", async () => {
    await setUp();
    const a = await start();
    const b = await start({ watch: alice });
    const room = await a.team.createChannel(owner, {
      kind: "group",
      name: "ops",
      agentIds: ["writer"],
      userIds: [],
    });
    await a.team.postMessage(owner, room.id, "before alice joined");
    await a.team.addMember(owner, room.id, { type: "user", id: "alice" });
    // B learns of the change through the relay; then alice's subscriber on B gets the channel's events.
    const deadline = Date.now() + 5000;
    let seen = false;
    while (!seen && Date.now() < deadline) {
      const posted = await a.team.postMessage(owner, room.id, "hello alice");
      seen = await b
        .waitFor((e) => e.type === "message" && e.message.id === posted.message.id, 300)
        .then(() => true)
        .catch(() => false);
    }
    expect(seen).toBe(true);
    expect(b.events.some((e) => e.type === "message" && e.message.text === "before alice joined")).toBe(
      false,
    );
  });

  it("cancels on B a run that A is running", async () => {
    await setUp();
    const a = await start();
    const b = await start();
    const room = await a.team.createChannel(owner, {
      kind: "group",
      name: "ops",
      agentIds: ["writer"],
      userIds: [],
    });
    server.enqueue({ text: "a slow answer", delayMs: 10_000 });
    const posted = await a.team.postMessage(owner, room.id, "@writer take your time");
    const runId = posted.runs[0]!.id;
    await b.waitFor((e) => e.type === "run" && e.run.id === runId && e.run.status === "running");
    await b.team.cancelRun(owner, runId);
    const final = (await b.waitFor(ended(runId))) as { run: TeamRun };
    expect(final.run.status).toBe("cancelled");
    expect(final.run.error).toContain("Cancelled by olivia");
    expect((await b.team.getRun(owner, runId)).status).toBe("cancelled");
  });

  it("takes over and resumes a run whose instance stopped renewing its lease, and refuses the old owner's writes", async () => {
    await setUp();
    // A renews far too rarely for its lease: to the others it is as good as dead.
    const a = await start({ leaseTtlMs: 300, leaseCheckMs: 60_000 });
    const room = await a.team.createChannel(owner, {
      kind: "group",
      name: "ops",
      agentIds: ["writer"],
      userIds: [],
    });
    server.enqueue({ text: "too late", delayMs: 1500 }, { text: "resumed by B" });
    const posted = await a.team.postMessage(owner, room.id, "@writer slow one");
    const runId = posted.runs[0]!.id;
    // B starts once A runs it, so A (not B's job poll) holds the run when its lease runs out.
    await a.waitFor((e) => e.type === "run" && e.run.id === runId && e.run.status === "running");
    const b = await start({ leaseTtlMs: 300, leaseCheckMs: 100 });
    await b.waitFor((e) => e.type === "run" && e.run.id === runId && e.run.status === "done");
    // A finds out at its next write: it gives up instead of overwriting B's run.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const stored = await b.team.getRun(owner, runId);
    expect(stored.status).toBe("done");
    const messages = await b.team.listMessages(owner, room.id);
    expect(messages.some((m) => m.text === "too late")).toBe(false);
    expect(messages.filter((m) => m.runId === runId).map((m) => m.text)).toEqual(["resumed by B"]);
  });

  it("puts back in the queue a job claimed by an instance that died before starting it", async () => {
    await setUp();
    server.enqueue({ text: "answered after the requeue" });
    // A takes messages but runs none; the job is then claimed by an instance that never starts it.
    const a = await start({ concurrency: 0 });
    const chat = await a.team.createChannel(owner, {
      kind: "direct",
      name: "lost claim",
      leaderAgentId: "writer",
      agentIds: ["writer"],
      userIds: [],
    });
    const runId = (await a.team.postMessage(owner, chat.id, "are you there?")).runs[0]!.id;
    const claimed = await new PgRunJobRepo(db).claim("a-dead-instance", Date.now() + 200);
    expect(claimed?.stored.run.id).toBe(runId);
    const b = await start({ leaseTtlMs: 300, leaseCheckMs: 100 });
    await b.waitFor((e) => e.type === "run" && e.run.id === runId && e.run.status === "done", 15_000);
    const row = await db.one<{ lease_owner: string }>("SELECT lease_owner FROM team_runs WHERE id = $1", [
      runId,
    ]);
    expect(row?.lease_owner).toBe(b.relay.instanceId);
    const answers = (await b.team.listMessages(owner, chat.id)).filter((m) => m.runId === runId);
    expect(answers.map((m) => m.text)).toEqual(["answered after the requeue"]);
    expect(server.requests).toHaveLength(1);
  });

  it("runs chat answers as jobs: 40 posted to A while B is idle are run by both, each exactly once", async () => {
    await setUp();
    // A plugin tool that appends the id of the run calling it to one file, whichever instance runs it.
    const log = join(mkdtempSync(join(tmpdir(), "dimsum-jobs-")), "runs.log");
    homes.push(dirname(log));
    writeFileSync(log, "");
    const plugin = {
      name: "log-run",
      source: `import { appendFileSync } from "node:fs";
export default {
  name: "log_run",
  description: "Notes that this run ran.",
  parameters: { type: "object", properties: {} },
  async execute(_args, ctx) { appendFileSync(${JSON.stringify(log)}, ctx.runId + "\\n"); return "noted"; },
};
`,
    };
    server.reset();
    // Every run calls the tool, then answers: 80 model calls, whichever run makes them. Each run
    // takes a second, so A's three slots fill faster than messages arrive however loaded the machine.
    const turn = (request: { body: unknown }) =>
      JSON.stringify(request.body).includes("noted")
        ? { text: "done", delayMs: 500 }
        : { toolCalls: [{ name: "log_run", args: {} }], delayMs: 500 };
    server.enqueue(...Array.from({ length: 80 }, () => turn));
    const a = await start({ concurrency: 3, plugin });
    const b = await start({ concurrency: 3, plugin });
    const runIds: string[] = [];
    for (let i = 0; i < 40; i++) {
      const chat = await a.team.createChannel(owner, {
        kind: "direct",
        name: `job ${i}`,
        leaderAgentId: "writer",
        agentIds: ["writer"],
        userIds: [],
      });
      runIds.push((await a.team.postMessage(owner, chat.id, `question ${i}`)).runs[0]!.id);
    }
    for (const runId of runIds) await b.waitFor(ended(runId), 60_000);
    // Each run's tool ran exactly once.
    const logged = readFileSync(log, "utf8").trim().split("\n");
    expect(logged.sort()).toEqual([...runIds].sort());
    const rows = await db.many<{ id: string; status: string; lease_owner: string }>(
      "SELECT id, status, lease_owner FROM team_runs WHERE id = ANY($1::text[])",
      [runIds],
    );
    expect(rows.every((r) => r.status === "done")).toBe(true);
    const byOwner = new Map<string, number>();
    for (const row of rows) byOwner.set(row.lease_owner, (byOwner.get(row.lease_owner) ?? 0) + 1);
    expect([...byOwner.keys()].sort()).toEqual([a.relay.instanceId, b.relay.instanceId].sort());
    // Both instances ran at least 30% of them.
    for (const count of byOwner.values()) expect(count).toBeGreaterThanOrEqual(12);
  }, 90_000);
});
