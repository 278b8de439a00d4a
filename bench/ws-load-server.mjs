// Child processes of bench/ws-load.mjs, so the load generator, the Dimsum server and the fake LLM
// each have their own event loop and their CPU time and memory are measured apart.
//   node bench/ws-load-server.mjs llm     the fake LLM: waits LATENCY_MS, then streams a short answer
//   node bench/ws-load-server.mjs real-llm  the fake LLM of bench/real-use.mjs: per answer, a time to
//                                         first token, a token rate, a length and tool steps drawn from
//                                         the tag (see realPlan), streamed one token per SSE event
//   node bench/ws-load-server.mjs server  `dimsum serve`'s wiring (openStorage + openCluster + buildTeam +
//                                         createServer + team routes): SQLite in a temp home, or PostgreSQL
//                                         and Redis when DIMSUM_DATABASE_URL / DIMSUM_REDIS_URL /
//                                         DIMSUM_SECRET_KEY are set (passed through from the parent)
// Both print their URL as the first stdout line. The server answers IPC requests from its parent:
// {type:"stats"} → memory, CPU, event-loop delay and hub.stats(); {type:"reset"} restarts those
// counters (and starts the CPU profiler when PROFILE_FILE is set; `stats` writes the profile there);
// {type:"stop"} closes everything and exits.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { Session } from "node:inspector/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { loadConfig } from "../dist/config/load-config.js";
import { createServer } from "../dist/server/app.js";
import { AuthEvents } from "../dist/server/auth/auth-events.js";
import { relayAuthEvents } from "../dist/server/auth/auth-relay.js";
import { buildTeam, knowledgeOf } from "../dist/server/compose.js";
import { mountTeamRoutes } from "../dist/server/routes/team.js";
import { openCluster, openStorage } from "../dist/server/storage/open-storage.js";
import { makeSplitter } from "../dist/testing/fake-llm-encoders.js";
import { openaiEncoder } from "../dist/testing/fake-llm-openai.js";
import { startFakeLlmServer } from "../dist/testing/fake-llm-server.js";

/** Raised for the bench: every client logs in and posts from 127.0.0.1, far beyond the defaults. */
const BENCH_RATE_LIMITS = {
  loginPerIp: { capacity: 1_000_000, perMinute: 1_000_000 },
  loginPerUsername: { capacity: 1_000_000, perMinute: 1_000_000 },
  messagePerUser: { capacity: 1_000_000, perMinute: 1_000_000 },
  messagePerIp: { capacity: 1_000_000, perMinute: 1_000_000 },
};

/** CPU time (user + system, all threads) since `from`. */
function cpuMs(from) {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1000;
}

const TAG = /\[bench:([A-Za-z0-9]+)\]/;

/** The tag of the newest user message in an OpenAI request body (the bench puts one in every post). */
function tagOf(body) {
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== "user") continue;
    const text = typeof m.content === "string" ? m.content : JSON.stringify(m.content);
    const found = TAG.exec(text);
    if (found) return found[1];
  }
  return "none";
}

async function runLlm() {
  const latencyMs = Number(process.env.LATENCY_MS ?? 200);
  const server = await startFakeLlmServer({
    // The turn waits itself (instead of `delayMs`) so it can time its own wait: timer lateness in
    // this process is the fake's own time, not Dimsum's, and the client subtracts it per answer.
    defaultTurn: async (request) => {
      const t0 = performance.now();
      await new Promise((resolve) => setTimeout(resolve, latencyMs));
      const own = performance.now() - t0;
      return {
        text: `Answer [bench:${tagOf(request.body)}]: a short streamed reply from the fake model. [fake-ms=${own.toFixed(3)}]`,
        usage: { input: 300, output: 20 },
      };
    },
  });
  // Keep the request log (bodies with every tool schema) from growing across thousands of runs.
  setInterval(() => server.requests.splice(0), 500).unref();
  let cpu = process.cpuUsage();
  process.on("message", (msg) => {
    if (msg?.type === "reset") cpu = process.cpuUsage();
    if (msg?.type === "reset" || msg?.type === "stats") process.send({ type: msg.type, cpuMs: cpuMs(cpu) });
  });
  process.stdout.write(`${server.url}\n`);
  const stop = () => server.close().then(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("disconnect", stop);
}

/** A number in [0, 1) from a string and a salt (FNV-1a, then a xorshift round): the same for a tag. */
function unit(text, salt) {
  let h = 2166136261 ^ salt;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  h ^= h >>> 13;
  h = Math.imul(h, 0x5bd1e995);
  h ^= h >>> 15;
  return (h >>> 0) / 2 ** 32;
}

/**
 * What the real-use model does for one answer (by its tag): each model call waits a time to first
 * token of 0.5–3 s; the answer streams at 30–80 tokens/s, 50–1,000 tokens (log-uniform); 0–3 tool
 * steps (50 / 25 / 15 / 10 %) come first, each its own call; 2 % of answers are long: a minute of tokens.
 */
export function realPlan(tag) {
  const rate = 30 + 50 * unit(tag, 2);
  const long = unit(tag, 5) < 0.02;
  const tokens = long ? Math.round(rate * 60) : Math.round(50 * 20 ** unit(tag, 3));
  const t = unit(tag, 4);
  const toolSteps = t < 0.5 ? 0 : t < 0.75 ? 1 : t < 0.9 ? 2 : 3;
  return { rate, tokens, toolSteps, long, ttftMs: (step) => 500 + 2500 * unit(tag, 10 + step) };
}

/** Tool results after the newest user message: the step of the answer this request is. */
function stepOf(body) {
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  let steps = 0;
  for (let i = messages.length - 1; i >= 0 && messages[i]?.role !== "user"; i--) {
    if (messages[i]?.role === "assistant") steps++;
  }
  return steps;
}

/**
 * The real-use fake model (OpenAI protocol, one token per SSE event). A 5 ms tick writes every stream's
 * due events, so thousands of streams cost one timer. It times itself per answer (epoch ms): each call's
 * arrival and end, and when the first text token was written; `{type:"timings"}` over IPC returns and
 * clears them, so the bench subtracts the model's own time (lateness in this process included).
 */
async function runRealLlm() {
  const split = makeSplitter(6);
  const streams = new Set();
  const timings = new Map();
  const epoch = () => performance.timeOrigin + performance.now();
  let seq = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    for (const s of streams) {
      let chunk = "";
      while (s.next < s.frames.length && s.due[s.next] <= now) {
        if (s.next === 1 && s.text) s.timing.firstTextAt = epoch();
        chunk += s.frames[s.next++];
      }
      if (chunk) s.res.write(chunk);
      if (s.next >= s.frames.length) {
        streams.delete(s);
        s.res.end();
        s.timing.ownMs += epoch() - s.arrived;
        s.timing.endAt = epoch();
      }
    }
  }, 5);
  const server = createHttpServer((req, res) => {
    const arrived = epoch();
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      const system = body.messages?.[0]?.role === "system" ? String(body.messages[0].content) : "";
      if (system.startsWith("Write a title")) {
        // A chat's title, asked after its first answer: short, at once, not part of any answer's time.
        const ctx = {
          reply: { text: "Bench chat" },
          model: "gpt-bench",
          seq: ++seq,
          usage: { input: 50, output: 3 },
          split,
        };
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        res.end(openaiEncoder.stream(ctx, { body }).join(""));
        return;
      }
      const tag = tagOf(body);
      const plan = realPlan(tag);
      const step = stepOf(body);
      let timing = timings.get(tag);
      if (!timing || step === 0) {
        timing = { ownMs: 0, firstTextOwnMs: undefined, firstTextAt: undefined, endAt: undefined, steps: 0 };
        timings.set(tag, timing);
      }
      timing.steps++;
      const tool = step < plan.toolSteps;
      const text = tool ? "" : `[bench:${tag}] ${"lorem ".repeat(Math.max(1, plan.tokens - 2))}`.trimEnd();
      const reply = tool
        ? { toolCalls: [{ name: "calculator", args: { expression: `${step + 6} * 7` } }] }
        : { text, usage: { input: 1200, output: plan.tokens } };
      const ctx = {
        reply,
        model: "gpt-bench",
        seq: ++seq,
        usage: reply.usage ?? { input: 1200, output: 20 },
        split,
      };
      const frames = openaiEncoder.stream(ctx, { body });
      const start = performance.now() + plan.ttftMs(step);
      // Frame 0 (the role) and the first token at the time to first token, then one token per 1/rate s.
      const due = frames.map((_, i) => start + (tool || i <= 1 ? 0 : ((i - 1) * 1000) / plan.rate));
      if (!tool) {
        // The model's own time to the first token: earlier calls' whole time plus this one's wait.
        timing.firstTextOwnMs = timing.ownMs + plan.ttftMs(step);
      }
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      res.flushHeaders();
      streams.add({ res, frames, due, next: 0, text: !tool, timing, arrived });
    });
  });
  server.keepAliveTimeout = 120_000;
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  let cpu = process.cpuUsage();
  process.on("message", (msg) => {
    if (msg?.type === "reset") cpu = process.cpuUsage();
    if (msg?.type === "reset" || msg?.type === "stats") process.send({ type: msg.type, cpuMs: cpuMs(cpu) });
    if (msg?.type === "timings") {
      process.send({ type: "timings", timings: Object.fromEntries(timings) });
      timings.clear();
    }
  });
  process.stdout.write(`http://127.0.0.1:${server.address().port}\n`);
  const stop = () => {
    clearInterval(tick);
    server.closeAllConnections();
    server.close(() => process.exit(0));
  };
  process.on("SIGTERM", stop);
  process.on("disconnect", stop);
}

/**
 * Counts the statements the pg driver sends (the same module instance the storage loads), so the
 * bench can say how many round trips and transactions a run costs on PostgreSQL.
 */
function countPgStatements() {
  const counts = { statements: 0, begins: 0, texts: new Map() };
  // Each statement text's key in the trace, computed once per text.
  const keys = new Map();
  const { Client } = createRequire(import.meta.url)("pg");
  const query = Client.prototype.query;
  Client.prototype.query = function (config, ...rest) {
    counts.statements++;
    const text = typeof config === "string" ? config : config?.text;
    if (process.env.WS_LOAD_PG_TRACE && typeof text === "string") {
      let key = keys.get(text);
      if (key === undefined) {
        key = text.replace(/\s+/g, " ").trim().slice(0, 160);
        keys.set(text, key);
      }
      counts.texts.set(key, (counts.texts.get(key) ?? 0) + 1);
    }
    if (typeof text === "string" && /^\s*BEGIN/i.test(text)) counts.begins++;
    return query.call(this, config, ...rest);
  };
  return counts;
}

async function runServer() {
  const home = mkdtempSync(join(tmpdir(), "dimsum-ws-load-"));
  // WS_LOAD_RUN_CONCURRENCY: the chat answers one instance runs at once (`runs.concurrency`; without
  // it, the default of the config).
  // WS_LOAD_GROUP_QUEUE: what a message in a group does (`queue.group`; bench/real-use.mjs sets `steer`,
  // so a group's question starts at once instead of waiting `collect`'s 1.5 s for the rest of a burst).
  const file = {};
  if (process.env.WS_LOAD_RUN_CONCURRENCY)
    file.runs = { concurrency: Number(process.env.WS_LOAD_RUN_CONCURRENCY) };
  if (process.env.WS_LOAD_GROUP_QUEUE) file.queue = { group: process.env.WS_LOAD_GROUP_QUEUE };
  if (Object.keys(file).length > 0) writeFileSync(join(home, "config.json"), JSON.stringify(file));
  const log = {
    info: () => {},
    warn: (message) => process.stderr.write(`server: ${message}\n`),
    error: (message, err) => process.stderr.write(`server: ${message}: ${err?.stack ?? err ?? ""}\n`),
  };
  const shared = ["DIMSUM_DATABASE_URL", "DIMSUM_REDIS_URL", "DIMSUM_SECRET_KEY"];
  const config = loadConfig({
    cwd: home,
    env: {
      DIMSUM_HOME: home,
      DIMSUM_MODEL: "openai:gpt-bench",
      OPENAI_API_KEY: "sk-bench-key-0000",
      OPENAI_BASE_URL: `${process.env.LLM_URL}/v1`,
      ...Object.fromEntries(shared.filter((k) => process.env[k]).map((k) => [k, process.env[k]])),
    },
  });
  // The storage composition of `dimsum serve` (src/cli/commands/serve.ts): the SQLite file of the
  // home, or PostgreSQL shared by the instances with the Redis relays for team and auth events.
  const pgCounts = config.server.databaseUrl ? countPgStatements() : undefined;
  const storage = await openStorage(config);
  const cluster = await openCluster(config, storage);
  const authEvents = new AuthEvents((err) => log.error("an auth event listener failed", err));
  const stopAuthRelay = cluster ? relayAuthEvents(authEvents, cluster.auth) : undefined;
  const { settings } = storage;
  const users = storage.accounts({ events: authEvents }).users;
  const memory = storage.memory({ warn: (message) => log.warn(message) });
  const knowledge = knowledgeOf(storage, config);
  // cwd = the temp home, so no project skills/ folder of the checkout leaks into the measure.
  const team = await buildTeam(
    { storage, ...(cluster ? { cluster } : {}), users, config, settings, log, memory, knowledge, cwd: home },
    {
      streamOptions: { retry: { maxRetries: 0 } },
      // WS_LOAD_DELTA_FRAME_MS: the delta frame budget (0: the old merge within one turn of the loop).
      ...(process.env.WS_LOAD_DELTA_FRAME_MS
        ? { deltaFrameMs: Number(process.env.WS_LOAD_DELTA_FRAME_MS) }
        : {}),
    },
  );
  const server = createServer({
    ...(storage.sqlite ? { db: storage.sqlite } : {}),
    accounts: storage.accounts,
    authEvents,
    config,
    home,
    team,
    settings,
    log,
    ensureOwner: false,
    // Account setup is not what is measured: cheap scrypt keeps creating N users quick.
    passwordHashParams: { N: 1024, r: 8, p: 1 },
    rateLimits: BENCH_RATE_LIMITS,
    staticDir: join(home, "no-web-build"),
    routes: [mountTeamRoutes({ team, memory })],
    ...(cluster ? { sharedLimits: cluster.limits } : {}),
  });
  const listening = await server.listen(0, "127.0.0.1");

  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  let peakRss = 0;
  // The live answers (running or waiting on the model) at their peak in the phase, and the memory then.
  let peakLive = { live: 0, heapUsed: 0, rss: 0 };
  const bench = { userId: "bench", role: "owner" };
  let cpu = process.cpuUsage();
  let since = performance.now();
  let pgFrom = { statements: 0, begins: 0 };
  const sample = () => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
    const live = team.runQueue(bench).live;
    if (live > peakLive.live) {
      const m = process.memoryUsage();
      peakLive = { live, heapUsed: m.heapUsed, rss: m.rss };
    }
  };
  setInterval(sample, 100).unref();

  const stop = async () => {
    await listening.close();
    await team.close();
    stopAuthRelay?.();
    await cluster?.close();
    await storage.close();
    rmSync(home, { recursive: true, force: true });
    process.exit(0);
  };
  // The parent died (e.g. a timeout killed it): do not linger as an orphan holding a temp dir.
  process.on("disconnect", stop);
  // PROFILE_FILE: a CPU profile of the measured phase only (reset → stats), not of setup.
  const profiler = process.env.PROFILE_FILE ? new Session() : undefined;
  profiler?.connect();
  process.on("message", async (msg) => {
    if (msg?.type === "reset") {
      if (profiler) {
        await profiler.post("Profiler.enable");
        await profiler.post("Profiler.setSamplingInterval", { interval: 500 });
        await profiler.post("Profiler.start");
      }
      sample();
      peakRss = process.memoryUsage.rss();
      peakLive = { live: 0, heapUsed: 0, rss: 0 };
      cpu = process.cpuUsage();
      since = performance.now();
      if (pgCounts) {
        pgFrom = { ...pgCounts };
        pgCounts.texts.clear();
      }
      delay.reset();
      process.send({ type: "reset" });
    } else if (msg?.type === "stats") {
      sample();
      const stats = {
        type: "stats",
        peakRss,
        maxRssLifetime: process.resourceUsage().maxRSS * 1024,
        cpuMs: cpuMs(cpu),
        wallMs: performance.now() - since,
        loopDelayP99Ms: delay.percentile(99) / 1e6,
        loopDelayMaxMs: delay.max / 1e6,
        hub: server.hub.stats(),
        peakLive,
        queue: team.runQueue(bench),
        pg: pgCounts
          ? { statements: pgCounts.statements - pgFrom.statements, begins: pgCounts.begins - pgFrom.begins }
          : undefined,
      };
      // WS_LOAD_PG_TRACE=<file>: the statements of the measured phase by text, most sent first.
      if (pgCounts && process.env.WS_LOAD_PG_TRACE) {
        const sorted = [...pgCounts.texts].sort((a, b) => b[1] - a[1]);
        writeFileSync(
          `${process.env.WS_LOAD_PG_TRACE}.${process.pid}`,
          sorted.map(([t, n]) => `${n}\t${t}`).join("\n"),
        );
      }
      // After the figures above, so writing the profile is not counted in them.
      if (profiler) {
        const { profile } = await profiler.post("Profiler.stop");
        writeFileSync(process.env.PROFILE_FILE, JSON.stringify(profile));
      }
      process.send(stats);
    } else if (msg?.type === "mem") {
      // Memory after a full GC (the bench starts this process with --expose-gc), for per-person figures.
      globalThis.gc?.();
      const m = process.memoryUsage();
      process.send({ type: "mem", heapUsed: m.heapUsed, rss: m.rss });
    } else if (msg?.type === "stop") {
      process.off("disconnect", stop);
      await stop();
    }
  });
  process.stdout.write(`${listening.url}\n`);
}

const role = process.argv[2];
if (role === "llm") await runLlm();
else if (role === "real-llm") await runRealLlm();
else if (role === "server") await runServer();
else {
  process.stderr.write("usage: node bench/ws-load-server.mjs llm|real-llm|server\n");
  process.exit(2);
}
