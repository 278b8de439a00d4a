/**
 * Real `dimsum serve` processes on one PostgreSQL database and one Redis (issue 17's acceptance):
 * a socket on B streams a run posted to A, token deltas included; A and B show the same history; a
 * third instance with an empty DIMSUM_HOME sees the same team, and opens secrets A stored; when the
 * instance running a slow answer is killed, another closes the run within 60 s; a one-shot schedule
 * fires once though every instance runs a scheduler; what one instance changes in memory-held state
 * (MCP servers from Settings, sign-ins, connectors) the other applies, and an MCP sign-in's browser
 * callback may reach either instance.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { type AddressInfo, createServer as createNetServer } from "node:net";
import { join, resolve } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ConnectorView } from "../../src/connectors/types.js";
import type { McpServerView } from "../../src/mcp/server-pool.js";
import type { ChannelMessage, ElicitationView, TeamRun } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { FakeTelegram } from "../../src/testing/fake-telegram.js";
// @ts-expect-error: a plain .mjs fixture without type declarations
import { startOAuthMcpServer } from "../mcp/fixtures/oauth-mcp-server.mjs";
import { EVERYTHING, FIXTURES } from "../mcp/helpers.js";
import { call, login, type Session, tempDir, waitFor } from "../server/helpers.js";
import { connect, deltaText, isDelta } from "../server/ws-helpers.js";
import { projectRoot } from "../support/fixtures.js";
import { createTestDatabase, postgresAvailable } from "../support/postgres.js";
import { REDIS_URL, redisAvailable } from "../support/redis.js";

const CLI = resolve(projectRoot, "bin/dimsum.js");
const PASSWORD = "cluster-owner-password";

interface Instance {
  url: string;
  child: ChildProcess;
  output: () => string;
}

async function freePort(): Promise<number> {
  const probe = createNetServer();
  await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
  const { port } = probe.address() as AddressInfo;
  await new Promise((r) => probe.close(r));
  return port;
}

async function until<T>(read: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe.skipIf(!postgresAvailable || !redisAvailable)(
  "dimsum serve instances on PostgreSQL and Redis",
  () => {
    let llm: FakeLlmServer;
    let database: { url: string; drop(): Promise<void> };
    const secretKey = randomBytes(32).toString("base64");
    const running: Instance[] = [];

    beforeAll(async () => {
      // Chunks spaced out, so token deltas arrive as several frames rather than one merged tick.
      llm = await startFakeLlmServer({
        defaultTurn: () => ({ text: "one two three four five six" }),
        chunkDelayMs: 15,
      });
      database = await createTestDatabase();
    });
    afterEach(async () => {
      await Promise.all(running.splice(0).map((i) => stop(i)));
    });
    afterAll(async () => {
      await llm?.close();
      await database?.drop();
    });

    async function stop(instance: Instance, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
      if (instance.child.exitCode !== null || instance.child.signalCode !== null) return;
      const exited = new Promise((r) => instance.child.once("exit", r));
      instance.child.kill(signal);
      await exited;
    }

    async function start(home = tempDir("dimsum-cluster-home-")): Promise<Instance> {
      // Each message gets a run of its own here (groups collect bursts by default).
      writeFileSync(join(home, "config.json"), JSON.stringify({ queue: { group: "followup" } }));
      let output = "";
      const child = spawn(process.execPath, [CLI, "serve", "--port", String(await freePort())], {
        cwd: home,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          DIMSUM_HOME: home,
          DIMSUM_OWNER_PASSWORD: PASSWORD,
          DIMSUM_DATABASE_URL: database.url,
          DIMSUM_REDIS_URL: REDIS_URL,
          DIMSUM_SECRET_KEY: secretKey,
          DIMSUM_MODEL: "openai:gpt-test",
          OPENAI_API_KEY: "sk-cluster-test",
          OPENAI_BASE_URL: `${llm.url}/v1`,
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
      child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
      const url = await waitFor(() => {
        if (child.exitCode !== null) throw new Error(`dimsum serve exited: ${output}`);
        return /serving on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
      });
      const instance = { url, child, output: () => output };
      running.push(instance);
      return instance;
    }

    async function json<T>(res: Response | Promise<Response>): Promise<T> {
      const r = await res;
      if (r.status >= 400) throw new Error(`HTTP ${r.status}: ${await r.text()}`);
      return (await r.json()) as T;
    }

    async function channel(url: string, owner: Session, name: string): Promise<string> {
      const created = await json<{ id: string }>(
        call(url, "/api/channels", {
          session: owner,
          body: { kind: "group", name, agentIds: ["assistant"], userIds: [] },
        }),
      );
      return created.id;
    }

    it("streams on B a run posted to A, and both show the same history; C with an empty home sees the team", async () => {
      const a = await start();
      const b = await start();
      const ownerA = await login(a.url, "owner", PASSWORD);
      // The login session lives in the shared database: B accepts A's session.
      const ownerB: Session = ownerA;
      const channelId = await channel(a.url, ownerA, "ops");
      const socket = connect(b.url);
      await socket.opened;
      socket.send({ type: "auth", token: ownerB.token });
      await socket.next((f) => f.type === "ready");
      socket.send({ type: "subscribe", channelId });
      await socket.next((f) => f.type === "backlog");

      llm.enqueue({ text: "alpha beta gamma delta epsilon zeta eta theta" });
      const posted = await json<{ runs: TeamRun[] }>(
        call(a.url, `/api/channels/${channelId}/messages`, {
          session: ownerA,
          body: { text: "@assistant count" },
        }),
      );
      const runId = posted.runs[0]?.id;
      await socket.next(
        (f) => f.type === "run" && (f.run as TeamRun).id === runId && (f.run as TeamRun).status === "done",
      );
      const answer = (await socket.next(
        (f) => f.type === "message" && (f.message as ChannelMessage).runId === runId,
      )) as unknown as { message: ChannelMessage };
      expect(answer.message.text).toBe("alpha beta gamma delta epsilon zeta eta theta");
      const deltas = socket.frames.filter((f) => isDelta(f) && f.runId === runId);
      expect(deltas.length).toBeGreaterThan(1);
      expect(deltas.map(deltaText).join("")).toBe("alpha beta gamma delta epsilon zeta eta theta");
      const seqs = deltas.map((f) => f.seq as number);
      expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
      const statuses = socket.frames.filter((f) => f.type === "run" && (f.run as TeamRun).id === runId);
      expect(statuses.map((f) => (f.run as TeamRun).status)).toEqual(["queued", "running", "done"]);
      socket.ws.close();

      const history = (url: string) =>
        json<ChannelMessage[]>(call(url, `/api/channels/${channelId}/messages`, { session: ownerA }));
      expect(await history(b.url)).toEqual(await history(a.url));

      // A provider key saved on A is sealed with the shared key: C (empty home) reads its preview.
      const saved = await call(a.url, "/api/settings/providers/deepseek", {
        session: ownerA,
        method: "PUT",
        body: { name: "deepseek", apiKey: "sk-deepseek-cluster-1234" },
      });
      expect(saved.status).toBeLessThan(300);
      const c = await start();
      const ownerC = await login(c.url, "owner", PASSWORD);
      expect(await history(c.url)).toEqual(await history(a.url));
      const agents = (url: string, s: Session) =>
        json<Array<{ id: string; soulStatus: string }>>(call(url, "/api/agents", { session: s }));
      expect(await agents(c.url, ownerC)).toEqual(await agents(a.url, ownerA));
      expect((await agents(c.url, ownerC)).every((x) => x.soulStatus === "ok")).toBe(true);
      const settings = await json<{ providers: Array<{ name: string; keyPreview?: string }> }>(
        call(c.url, "/api/settings", { session: ownerC }),
      );
      expect(JSON.stringify(settings)).toContain("1234");
    });

    it("resumes on another instance, within the lease TTL + 15 s, the answer of an instance killed mid-answer", async () => {
      const a = await start();
      const b = await start();
      const owner = await login(b.url, "owner", PASSWORD);
      const channelId = await channel(b.url, owner, "slow");
      const socket = connect(b.url);
      await socket.opened;
      socket.send({ type: "auth", token: owner.token });
      await socket.next((f) => f.type === "ready");
      socket.send({ type: "subscribe", channelId });
      llm.enqueue({ text: "never finished", delayMs: 120_000 });
      llm.enqueue({ text: "resumed on the other instance" });
      const requestsBefore = llm.requests.length;
      const posted = await json<{ runs: TeamRun[] }>(
        call(a.url, `/api/channels/${channelId}/messages`, {
          session: owner,
          body: { text: "@assistant take ages" },
        }),
      );
      const runId = posted.runs[0]?.id as string;
      await until(
        async () => {
          const run = await json<TeamRun>(call(b.url, `/api/runs/${runId}`, { session: owner }));
          return run.status === "running" ? run : undefined;
        },
        10_000,
        "the run to start",
      );
      // Killed while the model is answering (its request is in).
      await until(
        async () => (llm.requests.length > requestsBefore ? true : undefined),
        10_000,
        "the model call",
      );
      await stop(a, "SIGKILL");
      const killedAt = Date.now();
      const settled = await until(
        async () => {
          const run = await json<TeamRun>(call(b.url, `/api/runs/${runId}`, { session: owner }));
          return run.status === "running" || run.status === "queued" ? undefined : run;
        },
        65_000,
        "the run to settle",
      );
      // Lease TTL 30 s (checked every 10 s) + 15 s.
      expect(Date.now() - killedAt).toBeLessThan(45_000);
      expect(settled.status).toBe("done");
      // The socket on B saw the rest of the answer, streamed by B.
      await until(
        async () => {
          const deltas = socket.frames.filter((f) => isDelta(f) && f.runId === runId);
          return deltas.map(deltaText).join("").includes("resumed on the other instance") ? true : undefined;
        },
        10_000,
        "the resumed answer on the socket",
      );
      socket.ws.close();
      const messages = await json<ChannelMessage[]>(
        call(b.url, `/api/channels/${channelId}/messages`, { session: owner }),
      );
      expect(messages.filter((m) => m.runId === runId).map((m) => m.text)).toEqual([
        "resumed on the other instance",
      ]);
    }, 90_000);

    it("fires a one-shot schedule exactly once with two instances running their schedulers", async () => {
      const a = await start();
      const b = await start();
      const owner = await login(a.url, "owner", PASSWORD);
      const channelId = await channel(a.url, owner, "daily");
      const at = new Date(Date.now() + 3000).toISOString();
      const schedule = await json<{ id: string }>(
        call(a.url, "/api/schedules", {
          session: owner,
          body: {
            name: "once",
            timing: { kind: "once", at },
            target: { type: "agent", channelId, agentId: "assistant", prompt: "the report" },
          },
        }),
      );
      const runs = await until(
        async () => {
          const list = await json<Array<{ status: string }>>(
            call(b.url, `/api/schedules/${schedule.id}/runs`, { session: owner }),
          );
          return list.length > 0 && list.every((r) => r.status !== "running") ? list : undefined;
        },
        30_000,
        "the schedule to fire",
      );
      // Both schedulers have had several chances to fire it again by now.
      await new Promise((r) => setTimeout(r, 3000));
      const after = await json<unknown[]>(
        call(b.url, `/api/schedules/${schedule.id}/runs`, { session: owner }),
      );
      expect(runs).toHaveLength(1);
      expect(after).toHaveLength(1);
      const messages = await json<ChannelMessage[]>(
        call(b.url, `/api/channels/${channelId}/messages`, { session: owner }),
      );
      expect(messages.filter((m) => m.author.type === "agent")).toHaveLength(1);
    }, 60_000);

    it("polls a Telegram connector from one instance at a time and answers each message once", async () => {
      const telegram = await FakeTelegram.start();
      try {
        // Counts getUpdates calls in flight: two pollers would overlap.
        let polling = 0;
        let mostAtOnce = 0;
        const handle = telegram.handle.bind(telegram);
        telegram.handle = (url, raw, closed) => {
          if (!url.endsWith("/getUpdates")) return handle(url, raw, closed);
          polling++;
          mostAtOnce = Math.max(mostAtOnce, polling);
          return Promise.resolve(handle(url, raw, closed)).finally(() => {
            polling--;
          });
        };
        const a = await start();
        const owner = await login(a.url, "owner", PASSWORD);
        const created = await json<{ id: string }>(
          call(a.url, "/api/connectors", {
            session: owner,
            body: {
              type: "telegram",
              name: "Support bot",
              agentId: "assistant",
              settings: { mode: "polling", baseUrl: telegram.url, pollTimeoutSec: 1, streaming: false },
              secrets: { botToken: telegram.token },
            },
          }),
        );
        await json(call(a.url, `/api/connectors/${created.id}/start`, { session: owner, method: "POST" }));
        // B starts with the connector enabled in the shared database: it stands by for the poll lease.
        await start();
        await new Promise((r) => setTimeout(r, 2500));
        // One at a time: a message sent while the answer runs would steer it (the chat's default mode).
        for (const [i, text] of ["one", "two", "three"].entries()) {
          telegram.userMessage({ chatId: 4242, userId: 99, text, firstName: "Tess", username: "tess" });
          await until(async () => (telegram.sent.length > i ? true : undefined), 30_000, `answer ${i + 1}`);
        }
        await new Promise((r) => setTimeout(r, 2000));
        expect(telegram.sent).toHaveLength(3);
        expect(mostAtOnce).toBe(1);
      } finally {
        await telegram.close();
      }
    }, 60_000);
    it("applies on B the MCP servers, sign-ins and connectors changed on A, and takes A's sign-in callback", async () => {
      const oauth = (await startOAuthMcpServer()) as { url: string; stop(): Promise<void> };
      try {
        const homes = [tempDir("dimsum-cluster-home-"), tempDir("dimsum-cluster-home-")];
        for (const home of homes) {
          writeFileSync(
            join(home, "mcp.json"),
            JSON.stringify({ mcpServers: { notes: { url: oauth.url, oauth: {} } } }),
          );
        }
        const a = await start(homes[0]);
        const b = await start(homes[1]);
        const owner = await login(a.url, "owner", PASSWORD);
        const servers = (url: string) => json<McpServerView[]>(call(url, "/api/mcp", { session: owner }));

        // An MCP server added in Settings on A starts on B; removed on A, it stops on B.
        const added = await call(a.url, "/api/mcp", {
          session: owner,
          body: { name: "ev", transport: "stdio", command: process.execPath, args: [EVERYTHING, "stdio"] },
        });
        expect(added.status).toBe(201);
        const onB = await until(
          async () => (await servers(b.url)).find((v) => v.name === "ev" && v.status === "connected"),
          20_000,
          "the server to start on B",
        );
        expect(onB.tools).toBeGreaterThan(0);
        expect((await call(a.url, "/api/mcp/ev", { session: owner, method: "DELETE" })).status).toBe(204);
        await until(
          async () => ((await servers(b.url)).some((v) => v.name === "ev") ? undefined : true),
          10_000,
          "the server to stop on B",
        );

        // A sign-in started on A whose browser callback the load balancer sends to B.
        const started = await json<{ authorizationUrl: string }>(
          call(a.url, "/api/mcp/notes/signin", { session: owner, method: "POST" }),
        );
        const approved = await fetch(started.authorizationUrl, { redirect: "manual" });
        const location = new URL(approved.headers.get("location") ?? "");
        expect(location.origin).toBe(a.url);
        const callback = await fetch(`${b.url}${location.pathname}${location.search}`, {
          headers: { cookie: owner.cookie },
        });
        expect(callback.status).toBe(200);
        expect(await callback.text()).toContain("Signed in to notes");
        const mine = (url: string) => json<McpServerView[]>(call(url, "/api/mcp/mine", { session: owner }));
        expect((await mine(a.url))[0]?.status).toBe("connected");
        expect((await mine(b.url))[0]?.status).toBe("connected");
        // Signed out on B: A's connection closes too.
        await json(call(b.url, "/api/mcp/notes/signin", { session: owner, method: "DELETE" }));
        expect((await mine(a.url))[0]?.status).toBe("disconnected");
        // A callback no instance waits for is refused.
        const stale = await fetch(`${b.url}/api/mcp/oauth/callback?state=nobody&code=x`, {
          headers: { cookie: owner.cookie },
        });
        expect(stale.status).toBe(400);

        // A connector started on A runs on B too; stopped on A, it stops on B.
        const connector = await json<ConnectorView>(
          call(a.url, "/api/connectors", {
            session: owner,
            body: {
              type: "webhook",
              name: "Bridge",
              agentId: "assistant",
              settings: { outboundUrl: "https://example.com/hook" },
              secrets: { secret: "a-long-enough-shared-secret" },
            },
          }),
        );
        const stateOn = async (url: string) =>
          (await json<ConnectorView>(call(url, `/api/connectors/${connector.id}`, { session: owner }))).status
            .state;
        expect(await stateOn(b.url)).toBe("stopped");
        await json(call(a.url, `/api/connectors/${connector.id}/start`, { session: owner, method: "POST" }));
        await until(
          async () => ((await stateOn(b.url)) === "running" ? true : undefined),
          10_000,
          "B to run it",
        );
        await json(call(a.url, `/api/connectors/${connector.id}/stop`, { session: owner, method: "POST" }));
        await until(
          async () => ((await stateOn(b.url)) === "stopped" ? true : undefined),
          10_000,
          "B to stop it",
        );
      } finally {
        await oauth.stop();
      }
    }, 90_000);
    it("lists on B the request for input of a run A holds, and takes the answer there", async () => {
      const homes = [tempDir("dimsum-cluster-home-"), tempDir("dimsum-cluster-home-")];
      for (const home of homes) {
        writeFileSync(
          join(home, "mcp.json"),
          JSON.stringify({
            mcpServers: {
              feat: { command: process.execPath, args: [join(FIXTURES, "client-features-server.mjs")] },
            },
          }),
        );
      }
      const a = await start(homes[0]);
      const b = await start(homes[1]);
      const owner = await login(a.url, "owner", PASSWORD);
      const channelId = await channel(a.url, owner, "asking");
      llm.enqueue({ toolCalls: [{ name: "feat_ask_name", args: {} }] });
      llm.enqueue({ text: "greeted" });
      const posted = await json<{ runs: TeamRun[] }>(
        call(a.url, `/api/channels/${channelId}/messages`, {
          session: owner,
          body: { text: "@assistant greet me" },
        }),
      );
      const runId = posted.runs[0]?.id as string;
      const listed = (url: string) =>
        json<ElicitationView[]>(call(url, `/api/channels/${channelId}/elicitations`, { session: owner }));
      const request = await until(async () => (await listed(a.url))[0], 20_000, "the request on A");
      // B holds nothing of this run; it asks the instance that leases it.
      expect(await listed(b.url)).toEqual([request]);
      const answered = await call(b.url, `/api/runs/${runId}/elicitations/${request.id}`, {
        session: owner,
        body: { action: "accept", content: { name: "Ada" } },
      });
      expect(answered.status).toBe(200);
      const run = await until(
        async () => {
          const r = await json<TeamRun>(call(b.url, `/api/runs/${runId}`, { session: owner }));
          return r.status === "done" ? r : undefined;
        },
        20_000,
        "the run to finish",
      );
      expect(run.status).toBe("done");
      expect(await listed(b.url)).toEqual([]);
      expect(JSON.stringify(llm.requests.at(-1)?.body)).toContain("hello Ada, age 30");
    }, 60_000);
    it("counts failed sign-ins of one address and name on every instance together", async () => {
      const a = await start();
      const b = await start();
      // A name of its own: the counts live in Redis, which outlives this run.
      const username = `someone-${randomBytes(4).toString("hex")}`;
      const attempt = (url: string) =>
        fetch(`${url}/api/auth/login`, {
          method: "POST",
          headers: { "content-type": "application/json", origin: url },
          body: JSON.stringify({ username, password: "not-the-password" }),
        }).then((r) => r.status);
      // Five free failures in all, whichever instance the load balancer picks…
      const statuses = [];
      for (const url of [a.url, b.url, a.url, b.url, a.url]) statuses.push(await attempt(url));
      expect(statuses).toEqual([401, 401, 401, 401, 401]);
      // …then every instance makes the pair wait.
      expect(await attempt(b.url)).toBe(429);
      expect(await attempt(a.url)).toBe(429);
    });
  },
);
