/**
 * Streams resume anywhere (issue "Durable runs", item 4): two server instances in this process on one
 * PostgreSQL database and one Redis. A run streams on A; a socket following it on A goes away and
 * comes back to B with the last event seq it saw, and gets exactly the events it missed, in order,
 * then the live rest. The web UI's client does the same by itself when its reconnect lands on B.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { createServer } from "../../src/server/app.js";
import { mountTeamRoutes } from "../../src/server/routes/team.js";
import { openStorage } from "../../src/server/storage/open-storage.js";
import { openRedisRelay } from "../../src/store/redis/redis-relay.js";
import { createTeam } from "../../src/team/team.js";
import type { TeamRelayMessage } from "../../src/team/team-relay.js";
import type { ChannelRecord, PostResult, TeamRun } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { call, memoryLog, type Session, tempDir, withUsers } from "../server/helpers.js";
import { expectJson, follow } from "../server/team-helpers.js";
import { connect, type TestClient } from "../server/ws-helpers.js";
import {
  agentFrames,
  LONG_ANSWER,
  lastSeqOf,
  oneTo,
  runEnded,
  textOf,
  until,
  webClient,
} from "../server/ws-resume-helpers.js";
import { createTestDatabase, postgresAvailable } from "../support/postgres.js";
import { REDIS_URL, redisAvailable, testChannel } from "../support/redis.js";

interface Instance {
  url: string;
  close(): Promise<void>;
}

describe.skipIf(!postgresAvailable || !redisAvailable)("streams resume on another instance", () => {
  let llm: FakeLlmServer;
  let database: { url: string; drop(): Promise<void> };
  const secretKey = randomBytes(32).toString("base64");
  const running: Instance[] = [];
  let channel: string;

  beforeAll(async () => {
    llm = await startFakeLlmServer({ defaultTurn: { text: LONG_ANSWER }, chunkSize: 4, chunkDelayMs: 15 });
  });
  afterEach(async () => {
    for (const instance of running.splice(0).reverse()) await instance.close();
    await database?.drop();
  });
  afterAll(async () => {
    await llm?.close();
  });

  /** One instance as `dimsum serve` wires it, its relay on a pub/sub channel of this test alone. */
  async function start(): Promise<Instance> {
    const home = tempDir("dimsum-resume-home-");
    const config = loadConfig({
      cwd: home,
      env: {
        DIMSUM_HOME: home,
        DIMSUM_DATABASE_URL: database.url,
        DIMSUM_SECRET_KEY: secretKey,
        DIMSUM_MODEL: "openai:gpt-test",
        OPENAI_API_KEY: "sk-test-key-1234",
        OPENAI_BASE_URL: `${llm.url}/v1`,
      },
    });
    // A group answers each message with a run of its own (the default `collect` waits for a burst).
    config.queue = { ...config.queue, group: "followup" };
    const storage = await openStorage(config);
    const relay = await openRedisRelay<TeamRelayMessage>(REDIS_URL, { channel });
    const team = createTeam({
      home,
      config,
      teamStore: storage.team,
      store: storage.sessions,
      meetings: storage.meetings,
      ...(storage.personas ? { personas: storage.personas } : {}),
      streamOptions: { retry: { maxRetries: 0 } },
      cluster: { instanceId: relay.instanceId, relay },
    });
    const server = createServer({
      accounts: storage.accounts,
      settings: storage.settings,
      config,
      home,
      team,
      log: memoryLog(),
      ensureOwner: false,
      passwordHashParams: { N: 1024, r: 8, p: 1 },
      staticDir: join(home, "no-web-build"),
      routes: [mountTeamRoutes({ team })],
    });
    const listening = await server.listen(0, "127.0.0.1");
    const instance: Instance = {
      url: listening.url,
      async close() {
        await listening.close();
        await team.close();
        await relay.close();
        await storage.close();
      },
    };
    running.push(instance);
    return instance;
  }

  async function world() {
    database = await createTestDatabase();
    channel = testChannel();
    llm.reset();
    const a = await start();
    const b = await start();
    // The accounts and login sessions live in the shared database: B accepts A's session.
    const { owner } = await withUsers(a.url);
    const room = await expectJson<ChannelRecord>(
      await call(a.url, "/api/channels", {
        session: owner,
        body: { kind: "group", name: "Resume", agentIds: ["assistant"], userIds: [] },
      }),
      201,
    );
    // Follows the whole run on A, where it runs, without interruption: the reference.
    const watcher = await socket(a.url, owner);
    await follow(watcher, room.id);
    const post = async (): Promise<{ posted: PostResult; runId: string }> => {
      const posted = await expectJson<PostResult>(
        await call(a.url, `/api/channels/${room.id}/messages`, {
          session: owner,
          body: { text: "@assistant tell me a long story" },
        }),
        201,
      );
      // Started at once, or after the burst window of the `collect` mode.
      const runId =
        posted.runs[0]?.id ??
        (
          (
            await watcher.next(
              (f) => f.type === "run" && (f.run as TeamRun).triggerMessageId === posted.message.id,
            )
          ).run as TeamRun
        ).id;
      return { posted, runId };
    };
    return { a, b, owner, room, watcher, post };
  }

  async function socket(url: string, session: Session): Promise<TestClient> {
    const client = connect(url, { cookie: session.cookie });
    await client.next((f) => f.type === "ready");
    return client;
  }

  it("a socket leaving A and reconnecting to B with its last seq gets exactly the missed events, in order", {
    timeout: 40_000,
  }, async () => {
    const { a, b, owner, room, watcher, post } = await world();
    const onA = await socket(a.url, owner);
    await follow(onA, room.id);
    const { posted, runId } = await post();
    await until(() => agentFrames(onA.frames, runId).length >= 10, 10_000, "the first events on A");
    onA.ws.terminate();
    const seen = agentFrames(onA.frames, runId);
    const last = seen.at(-1)!.seq;
    expect(seen.map((f) => f.seq)).toEqual(oneTo(last));
    await until(() => lastSeqOf(watcher, runId) >= last + 5, 10_000, "events missed");
    expect(watcher.frames.some(runEnded(runId))).toBe(false);

    const onB = await socket(b.url, owner);
    onB.send({ type: "subscribe", channelId: room.id, since: posted.message.id, runs: { [runId]: last } });
    await onB.next(runEnded(runId));
    await watcher.next(runEnded(runId));
    const all = agentFrames(watcher.frames, runId);
    expect(all.map((f) => f.seq)).toEqual(oneTo(all.length));
    const resumed = agentFrames(onB.frames, runId);
    expect(resumed.map((f) => f.seq)).toEqual(oneTo(all.length).slice(last));
    expect(resumed).toEqual(all.slice(last));
    expect(textOf([...seen, ...resumed])).toBe(LONG_ANSWER);
    expect(onB.frames.some((f) => f.type === "run_gap")).toBe(false);
    onB.ws.close();
    watcher.ws.close();
  });

  it("the web UI's client, reconnecting to B, resumes the run it followed on A", {
    timeout: 40_000,
  }, async () => {
    const { a, b, owner, room, watcher, post } = await world();
    const web = webClient([a.url, b.url], owner.cookie, room.id);
    await until(() => web.frames.some((f) => f.type === "backlog"), 5000, "the backlog");
    const { runId } = await post();
    await until(() => agentFrames(web.frames, runId).length >= 8, 10_000, "the first events");
    web.drop();
    await until(() => web.frames.some(runEnded(runId)), 15_000, "the run's end on B");
    await watcher.next(runEnded(runId));
    expect(web.sockets).toHaveLength(2);
    const all = agentFrames(watcher.frames, runId);
    const got = agentFrames(web.frames, runId);
    expect(got.map((f) => f.seq)).toEqual(oneTo(all.length));
    expect(got).toEqual(all);
    const resubscribe = web.sent.filter((f) => f.type === "subscribe")[1];
    const resumedFrom = ((resubscribe?.runs ?? {}) as Record<string, number>)[runId]!;
    expect(resumedFrom).toBeGreaterThanOrEqual(8);
    expect(resumedFrom).toBeLessThan(all.length - 3);
    web.close();
    watcher.ws.close();
  });
});
