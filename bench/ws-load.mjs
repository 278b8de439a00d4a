// The team server under N concurrent WebSocket clients (issue 6 acceptance).
// Three processes: this one (the N clients), the Dimsum server (`ws-load-server.mjs server`: the wiring
// of `dimsum serve`) and the fake LLM (`ws-load-server.mjs llm`), so the server's CPU and memory are
// its own. Each client is a member account with its own direct chat with @assistant, its own keep-alive
// HTTP connection (like a browser tab) and a WebSocket signed in with an auth frame and subscribed. It
// posts M messages in sequence and waits for the agent's answer `message` event on its socket before
// the next, then pauses like a person reading and typing (T, 0.5–1.5 s; 0 in the saturation row).
// The fake LLM waits L ms, then streams a ~90-character answer.
//   added latency        = (POST sent → answer received on WS) − L
//   Dimsum-side latency  = (POST sent → answer received on WS) − the fake LLM's own measured time
// Standalone: `node bench/ws-load.mjs [N…]`; `--profile` profiles the server during the N=100 phase
// (`--profile --postgres`: on one PostgreSQL + Redis instance);
// `--backends` compares, at N = 100, one SQLite instance with 1 and 2 instances on PostgreSQL + Redis
// (client i posts to instance i mod 2 and has its socket on the other, so every answer crosses Redis).
// Diagnostics: WS_LOAD_PG_SYNCHRONOUS_COMMIT=off sets that on the bench databases, and
// WS_LOAD_PG_SETTINGS="name=value,…" any settings (e.g. log_statement_stats=on, which logs each
// statement's CPU time in the server's log);
// WS_LOAD_BACKENDS=<text> runs only the backends whose label contains it; WS_LOAD_PG_TRACE=<file>
// writes each instance's statements of the measured phase, by text and count, to <file>.<pid>.
import { fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { connect } from "node:net";
import { cpus, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { WebSocket } from "ws";

const here = dirname(fileURLToPath(import.meta.url));
const LATENCY_MS = 200;
/** Mean pause between an answer and the client's next message (uniform over 0.5–1.5 × this). */
const THINK_MS = 1000;
/**
 * Messages per client: more at small N so every percentile rests on at least 100 answers. The last
 * row is the saturation test: no pause at all, so N clients offer N / L runs per second (500/s at
 * N = 100), beyond what one server process on this machine completes; its latency is queueing
 * (Little's law: N / throughput − L), and its runs/s is the server's capacity.
 */
const PLAN = [
  { n: 10, m: 10, thinkMs: THINK_MS },
  { n: 100, m: 6, thinkMs: THINK_MS },
  { n: 500, m: 3, thinkMs: THINK_MS },
  { n: 100, m: 5, thinkMs: 0 },
];
const WARMUP_CLIENTS = 10;
const WARMUP_MESSAGES = 3;
const ANSWER_TIMEOUT_MS = 30_000;
const TARGET_P99_MS = 50;
const TAG = /\[bench:([A-Za-z0-9]+)\]/;
const FAKE_MS = /\[fake-ms=([0-9.]+)\]/;

/** Starts a role of ws-load-server.mjs; resolves once it printed its URL. */
export function spawnRole(role, env = {}, execArgv = process.execArgv) {
  return new Promise((resolve, reject) => {
    const child = fork(join(here, "ws-load-server.mjs"), [role], {
      env: { ...process.env, ...env },
      execArgv,
      stdio: ["ignore", "pipe", "inherit", "ipc"],
    });
    let out = "";
    const onData = (d) => {
      out += String(d);
      if (!out.includes("\n")) return;
      child.stdout.off("data", onData);
      resolve({ child, url: out.split("\n")[0].trim() });
    };
    child.stdout.on("data", onData);
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`the ${role} process exited early (${code})`)));
  });
}

/** One IPC request to a child; resolves with its reply of the same type. */
export function ask(child, type) {
  return new Promise((resolve) => {
    const onMessage = (msg) => {
      if (msg?.type !== type) return;
      child.off("message", onMessage);
      resolve(msg);
    };
    child.on("message", onMessage);
    child.send({ type });
  });
}

function send(url, method, data, headers, agent, conn) {
  return new Promise((resolve, reject) => {
    let reused = false;
    const req = request(url, { method, headers, agent }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        resolve({ status: res.statusCode, json: text ? JSON.parse(text) : undefined });
      });
    });
    req.on("socket", (socket) => {
      reused = !socket.connecting;
      if (!reused && conn) conn.opened++;
    });
    req.on("error", (err) => reject(Object.assign(err, { reused })));
    req.end(data);
  });
}

/**
 * One JSON request. Like a browser, a request that fails on a reused keep-alive socket (the server
 * closed it as idle just as it was reused) is sent once more on a fresh connection, and counted.
 */
export async function api(base, method, path, { body, token, agent, conn } = {}) {
  const data = body === undefined ? undefined : JSON.stringify(body);
  const headers = { accept: "application/json" };
  if (data !== undefined) headers["content-type"] = "application/json";
  if (token) headers.authorization = `Bearer ${token}`;
  try {
    return await send(`${base}${path}`, method, data, headers, agent, conn);
  } catch (err) {
    if (!err.reused || !["ECONNRESET", "EPIPE"].includes(err.code)) throw err;
    if (conn) conn.retried++;
    return send(`${base}${path}`, method, data, headers, agent, conn);
  }
}

export async function expectStatus(promise, status, what) {
  const res = await promise;
  if (res.status !== status) throw new Error(`${what}: HTTP ${res.status} ${JSON.stringify(res.json)}`);
  return res.json;
}

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function pool(items, limit, fn) {
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** One person: a keep-alive HTTP connection and a signed-in, subscribed socket, awaiting answers by tag. */
class LoadClient {
  /** `base`: where it posts; `wsBase`: where its socket is (another instance in the crossed mode). */
  constructor(base, user, wsBase = base) {
    Object.assign(this, { base, wsBase, user, waiting: new Map(), deltas: 0, unexpected: 0, runErrors: [] });
    this.serverClose = undefined;
  }

  async open() {
    const ws = new WebSocket(`${this.wsBase.replace(/^http/, "ws")}/ws`, { perMessageDeflate: false });
    this.ws = ws;
    const frames = { ready: undefined, backlog: undefined };
    const seen = (type) => new Promise((r) => (frames[type] = r));
    const ready = seen("ready");
    const backlog = seen("backlog");
    ws.on("message", (data) => {
      const at = performance.now();
      const text = data.toString();
      // Agent events (token deltas are most of them) are most frames: count the deltas without
      // parsing, so the load generator stays light.
      if (text.startsWith('{"type":"agent"')) {
        if (text.includes('"type":"text_delta"')) this.deltas++;
        return;
      }
      const frame = JSON.parse(text);
      if (frame.type === "message" && frame.message.author.type === "agent") {
        const tag = TAG.exec(frame.message.text)?.[1];
        const waiter = tag === undefined ? undefined : this.waiting.get(tag);
        if (!waiter) this.unexpected++;
        else {
          this.waiting.delete(tag);
          waiter({ at, fakeMs: Number(FAKE_MS.exec(frame.message.text)?.[1] ?? Number.NaN) });
        }
      } else if (frame.type === "run" && frame.run.status === "error") this.runErrors.push(frame.run.error);
      else if (frame.type === "error") this.runErrors.push(`error frame: ${frame.message}`);
      else frames[frame.type]?.();
    });
    ws.on("close", (code) => {
      if (!this.closing) this.serverClose = code;
    });
    await new Promise((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    ws.send(JSON.stringify({ type: "auth", token: this.user.token }));
    await ready;
    ws.send(JSON.stringify({ type: "subscribe", channelId: this.user.channelId }));
    await backlog;
  }

  /** Opens (or keeps) this client's HTTP connection, as the web UI does when it loads. */
  async touch() {
    const { token, agent } = this.user;
    await expectStatus(api(this.base, "GET", "/api/auth/me", { token, agent }), 200, "me");
  }

  /** Posts one tagged message; resolves with its timings, or `lost` after the timeout. */
  async exchange(tag) {
    const answered = new Promise((resolve) => {
      this.waiting.set(tag, resolve);
      setTimeout(() => resolve(undefined), ANSWER_TIMEOUT_MS).unref();
    });
    const { token, agent, conn, channelId } = this.user;
    const body = { text: `[bench:${tag}] Please answer in one short sentence.` };
    const t0 = performance.now();
    const res = await api(this.base, "POST", `/api/channels/${channelId}/messages`, {
      body,
      token,
      agent,
      conn,
    });
    const postMs = performance.now() - t0;
    if (res.status !== 201) {
      this.waiting.delete(tag);
      return { lost: true, postMs, error: `POST ${res.status} ${JSON.stringify(res.json)}` };
    }
    const answer = await answered;
    this.waiting.delete(tag);
    return answer
      ? { lost: false, postMs, e2eMs: answer.at - t0, fakeMs: answer.fakeMs }
      : { lost: true, postMs };
  }

  close() {
    this.closing = true;
    this.ws?.close();
    this.user.agent.destroy();
  }
}

/**
 * N member accounts, each signed in over its own connection with a direct chat with @assistant.
 * With several instances (`bases`), client i posts to instance i mod k and subscribes its socket on
 * instance (i + 1) mod k, so every answer reaches its socket through the relay between instances.
 */
async function createClients(bases, owner, prefix, n) {
  const password = "bench-password-1";
  const postBase = (i) => bases[i % bases.length];
  const wsBase = (i) => bases[(i + 1) % bases.length];
  const users = await pool(
    Array.from({ length: n }, (_, i) => i),
    16,
    async (i) => {
      const username = `${prefix}${i}`;
      const base = postBase(i);
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const body = { username, password, role: "member" };
      await expectStatus(api(bases[0], "POST", "/api/users", { body, ...owner }), 201, "create user");
      const login = { body: { username, password }, agent };
      const { token } = await expectStatus(api(base, "POST", "/api/auth/login", login), 200, "login");
      const chat = {
        body: { kind: "direct", name: `bench ${username}`, agentIds: ["assistant"] },
        token,
        agent,
      };
      const channel = await expectStatus(api(base, "POST", "/api/channels", chat), 201, "create chat");
      return { token, agent, channelId: channel.id, conn: { opened: 0, retried: 0 } };
    },
  );
  const clients = users.map((u, i) => new LoadClient(postBase(i), u, wsBase(i)));
  await pool(clients, 50, (c) => c.open());
  return clients;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Every client posts `m` messages in sequence, pausing 0.5–1.5 × `thinkMs` after each answer; starts
 * are spread over L + `thinkMs` so clients do not move in lockstep.
 */
async function drive(clients, m, label, thinkMs = 0) {
  const results = [];
  const t0 = performance.now();
  await Promise.all(
    clients.map(async (client, i) => {
      await sleep(Math.random() * (LATENCY_MS + thinkMs));
      for (let k = 0; k < m; k++) {
        if (k > 0 && thinkMs > 0) await sleep(thinkMs * (0.5 + Math.random()));
        results.push(await client.exchange(`${label}c${i}m${k}`));
      }
    }),
  );
  return { results, wallMs: performance.now() - t0 };
}

export function percentile(xs, p) {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}

/** Busy and total CPU ticks of the whole machine (Linux `/proc/stat`), to see other processes' load. */
export function machineTicks() {
  try {
    const f = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1, 9).map(Number);
    const total = f.reduce((a, b) => a + b, 0);
    return { total, busy: total - f[3] - f[4] };
  } catch {
    return undefined;
  }
}

/**
 * CPU time (ms) so far of the live PostgreSQL and Redis processes (Linux `/proc/<pid>/stat`, clock ticks
 * of 10 ms): `postgres` counts the server's own processes (WAL writer, checkpointer, …) and the
 * connections to `database` (a connection's title names its database); connections to other databases
 * (other work on the machine) are left out, so they count as other processes. Redis is all of it.
 */
function serviceCpuMs(database) {
  const ms = { postgres: 0, redis: 0 };
  try {
    for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
      let stat;
      let title;
      try {
        stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        title = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
      } catch {
        continue;
      }
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      if (comm !== "postgres" && comm !== "redis-server") continue;
      // A connection's title is "postgres: <cluster>: <user> <database> <client> <state>".
      const connection = /^postgres: (?:[^:]+: )?\S+ (\S+) (?:\S*\(\d+\)|\[local\])/.exec(title);
      if (connection && connection[1] !== database) continue;
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ms[comm === "postgres" ? "postgres" : "redis"] += (Number(f[11]) + Number(f[12])) * 10;
    }
  } catch {
    return { postgres: Number.NaN, redis: Number.NaN };
  }
  return ms;
}

/** The figures of several server instances as one: CPU and drops summed, RSS and loop delay the worst. */
function combineStats(list) {
  const max = (f) => Math.max(...list.map(f));
  return {
    instances: list.length,
    cpuMs: list.reduce((s, x) => s + x.cpuMs, 0),
    peakRss: max((x) => x.peakRss),
    maxRssLifetime: max((x) => x.maxRssLifetime),
    loopDelayP99Ms: max((x) => x.loopDelayP99Ms),
    loopDelayMaxMs: max((x) => x.loopDelayMaxMs),
    hub: { droppedSlow: list.reduce((s, x) => s + x.hub.droppedSlow, 0) },
    pg: list[0].pg
      ? {
          statements: list.reduce((s, x) => s + x.pg.statements, 0),
          begins: list.reduce((s, x) => s + x.pg.begins, 0),
        }
      : undefined,
  };
}

/**
 * The measured phase: CPU of each process (share of one core) and of everything else on the machine;
 * `database`: the PostgreSQL database the servers use, whose connections count as PostgreSQL.
 */
async function measuredPhase(servers, llm, clients, m, thinkMs, database) {
  await Promise.all([...servers.map((s) => ask(s, "reset")), ask(llm, "reset")]);
  const cpu0 = process.cpuUsage();
  const ticks0 = machineTicks();
  const services0 = serviceCpuMs(database);
  const { results, wallMs } = await drive(clients, m, "r", thinkMs);
  const [llmStats, ...each] = await Promise.all([ask(llm, "stats"), ...servers.map((s) => ask(s, "stats"))]);
  const stats = combineStats(each);
  const used = process.cpuUsage(cpu0);
  const ticks1 = machineTicks();
  const cpu = {
    server: stats.cpuMs / wallMs,
    llm: llmStats.cpuMs / wallMs,
    client: (used.user + used.system) / 1000 / wallMs,
  };
  const services1 = serviceCpuMs(database);
  cpu.postgres = (services1.postgres - services0.postgres) / wallMs;
  cpu.redis = (services1.redis - services0.redis) / wallMs;
  cpu.services = cpu.postgres + cpu.redis;
  const machine =
    ticks0 && ticks1 ? (cpus().length * (ticks1.busy - ticks0.busy)) / (ticks1.total - ticks0.total) : NaN;
  cpu.other = Math.max(0, machine - cpu.server - cpu.llm - cpu.client - (cpu.services || 0));
  return { results, wallMs, stats, cpu };
}

/**
 * One N: fresh server process(es), accounts and sockets, a warm-up, the measured phase. `instances`
 * servers share the storage given in `env` (they are started one after the other, so the first one
 * migrates the database); clients are spread over them as `createClients` says.
 */
async function measure(llm, { n, m, thinkMs }, env = {}, instances = 1) {
  const servers = [];
  const ownerAgent = new Agent({ keepAlive: true, maxSockets: 16 });
  let clients = [];
  try {
    for (let k = 0; k < instances; k++) servers.push(await spawnRole("server", { LLM_URL: llm.url, ...env }));
    const urls = servers.map((s) => s.url);
    const url = urls[0];
    const setupStart = performance.now();
    const body = { username: "owner", password: "bench-owner-pass" };
    const setup = await expectStatus(api(url, "POST", "/api/auth/setup", { body }), 201, "setup");
    const owner = { token: setup.token, agent: ownerAgent };
    clients = await createClients(urls, owner, "u", n);
    const warm = await createClients(urls, owner, "w", WARMUP_CLIENTS);
    const setupMs = performance.now() - setupStart;
    // Warm the JIT and the LLM connection pool on other users; the measured clients' first messages
    // (new agent sessions) are part of the measure.
    await drive(warm, WARMUP_MESSAGES, "w");
    for (const c of warm) c.close();
    // The server drops idle keep-alive sockets after 5 s: reopen them now, so the phase starts like
    // N open browser tabs rather than N simultaneous new connections.
    await pool(clients, 50, (c) => c.touch());
    const children = servers.map((s) => s.child);
    const database = env.DIMSUM_DATABASE_URL ? new URL(env.DIMSUM_DATABASE_URL).pathname.slice(1) : undefined;
    const { results, wallMs, stats, cpu } = await measuredPhase(
      children,
      llm.child,
      clients,
      m,
      thinkMs,
      database,
    );
    await new Promise((r) => setTimeout(r, 100)); // let late or duplicate frames arrive
    const done = results.filter((r) => !r.lost);
    const added = done.map((r) => r.e2eMs - LATENCY_MS);
    const dimsum = done.map((r) => r.e2eMs - r.fakeMs);
    const posts = results.map((r) => r.postMs);
    const sum = (f) => clients.reduce((s, c) => s + f(c), 0);
    return {
      n,
      m,
      thinkMs,
      setupMs,
      expected: n * m,
      lost: n * m - done.length,
      wallMs,
      runsPerSec: done.length / (wallMs / 1000),
      added: [50, 99, 100].map((p) => percentile(added, p)),
      dimsum: [50, 99].map((p) => percentile(dimsum, p)),
      fakeLate99: percentile(
        done.map((r) => r.fakeMs - LATENCY_MS),
        99,
      ),
      post: [50, 99].map((p) => percentile(posts, p)),
      deltas: sum((c) => c.deltas),
      unexpected: sum((c) => c.unexpected),
      opened: sum((c) => c.user.conn.opened),
      retried: sum((c) => c.user.conn.retried),
      serverClosed: sum((c) => (c.serverClose === undefined ? 0 : 1)),
      errors: [...clients.flatMap((c) => c.runErrors), ...results.filter((r) => r.error).map((r) => r.error)],
      stats,
      cpu,
      cpuPerRunMs: stats.cpuMs / Math.max(1, done.length),
    };
  } finally {
    for (const c of clients) c.close();
    ownerAgent.destroy();
    await Promise.all(
      servers.map(async ({ child }) => {
        if (child.exitCode !== null) return;
        const exited = new Promise((r) => child.once("exit", r));
        child.send({ type: "stop" });
        await exited;
      }),
    );
  }
}

const ms = (x) => `${x.toFixed(1)} ms`;
const mib = (x) => `${(x / 2 ** 20).toFixed(0)} MiB`;
const pct = (x) => `${(100 * x).toFixed(0)} %`;

function table(rows) {
  const line = (cells) => `| ${cells.join(" | ")} |`;
  const head = (r) =>
    `${r.label ? `${r.label}, ` : ""}${r.thinkMs > 0 ? `N = ${r.n}` : `N = ${r.n}, no pause (saturation)`}`;
  const out = [line(["measure", ...rows.map(head)]), line(["---", ...rows.map(() => "---")])];
  const add = (label, f) => out.push(line([label, ...rows.map(f)]));
  add("messages per client (M) / answers expected", (r) => `${r.m} / ${r.expected}`);
  add("pause after each answer (T)", (r) =>
    r.thinkMs > 0 ? `${r.thinkMs * 0.5}–${r.thinkMs * 1.5} ms` : "none",
  );
  add(
    "completed runs/s (offered: N / (L + T))",
    (r) => `${r.runsPerSec.toFixed(0)} (${((1000 * r.n) / (LATENCY_MS + r.thinkMs)).toFixed(0)})`,
  );
  add("**added latency p50 / p99** (e2e − L)", (r) => `**${ms(r.added[0])} / ${ms(r.added[1])}**`);
  add("added latency max", (r) => ms(r.added[2]));
  add(
    "Dimsum-side latency p50 / p99 (e2e − fake's own time)",
    (r) => `${ms(r.dimsum[0])} / ${ms(r.dimsum[1])}`,
  );
  add("fake LLM's own lateness over L, p99", (r) => ms(r.fakeLate99));
  add("POST → 201 p50 / p99", (r) => `${ms(r.post[0])} / ${ms(r.post[1])}`);
  add("**lost answers**", (r) => `**${r.lost}**`);
  add("run or POST errors / sockets closed by the server", (r) => `${r.errors.length} / ${r.serverClosed}`);
  add("WS clients dropped as too slow (`hub.stats()`)", (r) => String(r.stats.hub.droppedSlow));
  add("HTTP connections opened in the phase / POSTs retried", (r) => `${r.opened} / ${r.retried}`);
  add("delta frames received / duplicate or late answers", (r) => `${r.deltas} / ${r.unexpected}`);
  add(
    "server RSS (largest instance): peak in the phase / process lifetime max",
    (r) => `${mib(r.stats.peakRss)} / ${mib(r.stats.maxRssLifetime)}`,
  );
  add(
    "CPU in the phase, % of one core: server (all instances) / fake LLM / clients",
    (r) => `${pct(r.cpu.server)} / ${pct(r.cpu.llm)} / ${pct(r.cpu.client)}`,
  );
  add(
    "PostgreSQL (the bench database's connections and the server's own processes) / Redis, % of one core",
    (r) => `${pct(r.cpu.postgres)} / ${pct(r.cpu.redis)}`,
  );
  add("other processes on the machine meanwhile, % of one core", (r) => pct(r.cpu.other));
  add(
    "server CPU per completed run, all instances (→ runs/s one free core could serve)",
    (r) => `${ms(r.cpuPerRunMs)} (≈ ${(1000 / r.cpuPerRunMs).toFixed(0)})`,
  );
  if (rows.some((r) => r.stats.pg)) {
    add("PostgreSQL statements sent per completed run (of which BEGIN)", (r) => {
      const runs = r.expected - r.lost;
      const pg = r.stats.pg;
      return pg ? `${(pg.statements / runs).toFixed(1)} (${(pg.begins / runs).toFixed(1)})` : "–";
    });
  }
  add(
    "server event-loop delay p99 / max (worst instance)",
    (r) => `${ms(r.stats.loopDelayP99Ms)} / ${ms(r.stats.loopDelayMaxMs)}`,
  );
  add("setup (accounts, logins, chats, sockets)", (r) => `${(r.setupMs / 1000).toFixed(1)} s`);
  return out.join("\n");
}

/** Self time by function from a V8 CPU profile, largest first. */
export function hotSpots(profile, top = 15) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0;
    total += dt;
    const frame = byId.get(profile.samples[i])?.callFrame;
    if (!frame) continue;
    const file = frame.url.replace(/^file:\/\//, "").replace(/^.*?\/(node_modules|dist)\//, "$1/");
    const key = `${frame.functionName || "(anonymous)"} ${file}${file ? `:${frame.lineNumber + 1}` : ""}`;
    self.set(key, (self.get(key) ?? 0) + dt);
  }
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, us]) => ({ name, ms: us / 1000, share: us / total }));
}

async function withLlm(fn) {
  const llm = await spawnRole("llm", { LATENCY_MS: String(LATENCY_MS) });
  try {
    return await fn(llm);
  } finally {
    llm.child.kill("SIGTERM");
  }
}

/**
 * The bench section for BENCHMARKS.md (all of PLAN, or the given N); with `backends` (as `npm run
 * bench` calls it), followed by the `--backends` subsection when PostgreSQL and Redis answer.
 */
export async function run(ns = [...new Set(PLAN.map((p) => p.n))], { backends = true } = {}) {
  const failures = [];
  const rows = await withLlm(async (llm) => {
    const out = [];
    for (const plan of PLAN.filter((p) => ns.includes(p.n))) {
      process.stderr.write(`ws-load: N=${plan.n}, pause ${plan.thinkMs} ms…\n`);
      try {
        out.push(await measure(llm, plan));
      } catch (err) {
        failures.push(`N = ${plan.n} (pause ${plan.thinkMs} ms) failed: ${err?.stack ?? err}`);
      }
    }
    return out;
  });
  const at100 = rows.find((r) => r.n === 100 && r.thinkMs > 0);
  const saturated = rows.find((r) => r.thinkMs === 0);
  const met = at100 && at100.added[1] < TARGET_P99_MS;
  const errors = rows.flatMap((r) => r.errors).slice(0, 3);
  return [
    "## Team server under concurrent WebSocket clients (issue 6)",
    "",
    `Three processes on this machine: the load generator (N \`ws\` clients and their HTTP posts), the Dimsum server (the wiring of \`dimsum serve\`: \`openStorage\` + \`buildTeam\` + \`createServer\` + the team routes, SQLite in a temp dir) and the fake LLM (OpenAI protocol; waits L = ${LATENCY_MS} ms, then streams a ~90-character answer in 3–8 character chunks). Each client is its own member account with a direct chat with @assistant, one keep-alive HTTP connection and a WebSocket signed in with an auth frame and subscribed; it posts M messages in sequence (\`POST /api/channels/:id/messages\`, bearer token), waits for the agent's answer \`message\` event on its socket, then pauses T (uniform 0.5–1.5 × ${THINK_MS} ms: a person reading the answer and typing the next message, several times faster than people chat) before the next. Client starts are spread over L + T. The last column has no pause at all: N clients then offer N / L = ${(100 * 1000) / LATENCY_MS} runs/s, more than the server completes, so it measures the server's capacity (completed runs/s) and its latency is queueing (Little's law: N / throughput − L). Added latency = POST sent → answer received on the socket, minus L; the Dimsum-side latency subtracts the fake LLM's own measured time per answer instead. A fresh server per N, warmed by ${WARMUP_CLIENTS} other users × ${WARMUP_MESSAGES} messages. Rate limits raised for the bench: capacity = perMinute = 1,000,000 for logins per IP and per username and messages per user and per IP (every client posts from 127.0.0.1); scrypt N = 2^10 for the accounts.`,
    "",
    table(rows),
    "",
    at100
      ? `Target p99 added latency < ${TARGET_P99_MS} ms at N = 100: **${met ? "met" : "not met"}** (${ms(at100.added[1])}).`
      : "",
    saturated
      ? `Saturation (N = ${saturated.n}, no pause): ${saturated.runsPerSec.toFixed(0)} runs/s completed at ${ms(saturated.cpuPerRunMs)} of server CPU per run; p99 added latency ${ms(saturated.added[1])}.`
      : "",
    ...failures.map((f) => `\n${f}`),
    errors.length > 0 ? `\nFirst errors: ${errors.map((e) => `\`${e}\``).join(", ")}` : "",
    backends ? `\n${await backendsSection()}` : "",
  ].join("\n");
}

const REDIS_URL = process.env.DIMSUM_BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";

/** Whether Redis answers PING at REDIS_URL (no password). */
function redisReachable() {
  const { hostname, port } = new URL(REDIS_URL);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 6379), timeout: 2000 });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.once("data", (d) => done(String(d).startsWith("+PONG")));
    socket.once("error", () => done(false));
    socket.once("timeout", () => done(false));
  });
}

/** The issue 17 subsection: the `--backends` tables, or why they were not measured. */
export async function backendsSection() {
  const { postgresReachable, BENCH_POSTGRES_URL } = await import("./postgres.mjs");
  const heading = "### One SQLite instance, 1 and 2 instances on PostgreSQL + Redis (issue 17)";
  if (!(await postgresReachable()) || !(await redisReachable())) {
    return `${heading}\n\nNot measured: needs PostgreSQL at ${BENCH_POSTGRES_URL} and Redis at ${REDIS_URL}.`;
  }
  return [
    heading,
    "",
    `\`node bench/ws-load.mjs --backends\` (N = 100; the same clients, fake LLM and phases as above). Each row has fresh server processes: SQLite in a temp home (the baseline), or a fresh PostgreSQL database (dropped after) at ${BENCH_POSTGRES_URL} with the Redis relays at ${REDIS_URL} and one DIMSUM_SECRET_KEY, with 1 or 2 instances started one after the other. The server is composed as \`dimsum serve\` does (\`openStorage\` + \`openCluster\` + \`buildTeam\` + \`createServer\`; no scheduler, connectors or MCP). With 2 instances there is no load balancer: the owner creates every account on instance 0; client i logs in, creates its chat and posts on instance i mod 2 and subscribes its socket on instance (i + 1) mod 2, so every answer (token deltas, run status, the message) reaches its socket through Redis. Rows run plans outer, backends inner. Each instance runs at most ${process.env.WS_LOAD_RUN_CONCURRENCY ? `${process.env.WS_LOAD_RUN_CONCURRENCY} chat answers at once (\`runs.concurrency\`, set by WS_LOAD_RUN_CONCURRENCY)` : "32 chat answers at once (`runs.concurrency`, the default; WS_LOAD_RUN_CONCURRENCY sets another)"}. CPU is read from \`/proc\`: PostgreSQL counts the server's own processes and the connections to the bench database (not other databases' connections, which count as the rest of the machine), Redis all of it; "÷ SQLite's" is the row's saturation runs/s over SQLite's in the same run.`,
    "",
    await runBackends(),
  ].join("\n");
}

/** The storage setups `--backends` compares in one run (issue 17). */
const BACKENDS = [
  { label: "SQLite, 1 instance", instances: 1, postgres: false },
  { label: "PostgreSQL + Redis, 1 instance", instances: 1, postgres: true },
  { label: "PostgreSQL + Redis, 2 instances", instances: 2, postgres: true },
];

/**
 * One backend row: SQLite in the server's temp home, or a fresh PostgreSQL database (dropped after)
 * with the Redis relays, one secret key for all instances.
 */
async function measureBackend(llm, plan, backend) {
  if (!backend.postgres) return { label: backend.label, ...(await measure(llm, plan, backend.env)) };
  const { createBenchDatabase } = await import("./postgres.mjs");
  // WS_LOAD_PG_SYNCHRONOUS_COMMIT=off: a diagnostic, to see how much the WAL flush of each commit costs.
  // WS_LOAD_PG_SETTINGS="name=value,…": any settings of the bench database (e.g. log_statement_stats=on).
  const settings = Object.fromEntries(
    (process.env.WS_LOAD_PG_SETTINGS ?? "")
      .split(",")
      .filter((kv) => kv.includes("="))
      .map((kv) => kv.split("=").map((x) => x.trim())),
  );
  if (process.env.WS_LOAD_PG_SYNCHRONOUS_COMMIT) {
    settings.synchronous_commit = process.env.WS_LOAD_PG_SYNCHRONOUS_COMMIT;
  }
  const database = await createBenchDatabase({ settings });
  try {
    const env = {
      ...backend.env,
      DIMSUM_DATABASE_URL: database.url,
      DIMSUM_REDIS_URL: REDIS_URL,
      DIMSUM_SECRET_KEY: randomBytes(32).toString("base64"),
    };
    return { label: backend.label, ...(await measure(llm, plan, env, backend.instances)) };
  } finally {
    await database.drop();
  }
}

/**
 * `--backends`: at N = 100, the row with the pause and the saturation row for each backend of
 * BACKENDS, in one run (plans outer, backends inner, so slow drift of the machine's other load
 * spreads over all backends).
 */
export async function runBackends() {
  const plans = PLAN.filter((p) => p.n === 100);
  const failures = [];
  const rows = await withLlm(async (llm) => {
    const out = [];
    for (const plan of plans) {
      for (const backend of BACKENDS) {
        // WS_LOAD_BACKENDS=<text>: only the backends whose label contains it (a diagnostic).
        if (process.env.WS_LOAD_BACKENDS && !backend.label.includes(process.env.WS_LOAD_BACKENDS)) continue;
        process.stderr.write(`ws-load: ${backend.label}, N=${plan.n}, pause ${plan.thinkMs} ms…\n`);
        try {
          out.push(await measureBackend(llm, plan, backend));
        } catch (err) {
          failures.push(
            `${backend.label}, N = ${plan.n} (pause ${plan.thinkMs} ms) failed: ${err?.stack ?? err}`,
          );
        }
      }
    }
    return out;
  });
  const line = (cells) => `| ${cells.join(" | ")} |`;
  const sqliteSat = rows.find((r) => r.label === BACKENDS[0].label && r.thinkMs === 0);
  const perRun = (r, share) => ms((share * r.wallMs) / Math.max(1, r.expected - r.lost));
  const summary = [
    line([
      "backend",
      "saturation: completed runs/s (÷ SQLite's)",
      "saturation, CPU per completed run: Dimsum (all instances) / PostgreSQL / Redis",
      "PostgreSQL statements per run",
      `N = 100, pause ${THINK_MS * 0.5}–${THINK_MS * 1.5} ms: **p99 added latency** (p50)`,
      "saturation CPU, % of one core: Dimsum / PostgreSQL / Redis / rest of the machine",
      "lost answers (both rows)",
    ]),
    line(["---", "---", "---", "---", "---", "---", "---"]),
    ...BACKENDS.map(({ label }) => {
      const sat = rows.find((r) => r.label === label && r.thinkMs === 0);
      const paced = rows.find((r) => r.label === label && r.thinkMs > 0);
      const ratio = sat && sqliteSat ? ` (**${(sat.runsPerSec / sqliteSat.runsPerSec).toFixed(2)}**)` : "";
      const statements = sat?.stats.pg
        ? (sat.stats.pg.statements / Math.max(1, sat.expected - sat.lost)).toFixed(1)
        : "–";
      return line([
        label,
        sat ? `${sat.runsPerSec.toFixed(0)}${ratio}` : "failed",
        sat
          ? `${ms(sat.cpuPerRunMs)} / ${perRun(sat, sat.cpu.postgres)} / ${perRun(sat, sat.cpu.redis)}`
          : "",
        statements,
        paced ? `**${ms(paced.added[1])}** (${ms(paced.added[0])})` : "failed",
        sat
          ? `${pct(sat.cpu.server)} / ${pct(sat.cpu.postgres)} / ${pct(sat.cpu.redis)} / ${pct(sat.cpu.llm + sat.cpu.client + sat.cpu.other)}`
          : "",
        String((sat?.lost ?? 0) + (paced?.lost ?? 0)),
      ]);
    }),
  ];
  const errors = rows.flatMap((r) => r.errors).slice(0, 3);
  return [
    summary.join("\n"),
    "",
    "All figures of the same run:",
    "",
    table(rows),
    ...failures.map((f) => `\n${f}`),
    errors.length > 0 ? `\nFirst errors: ${errors.map((e) => `\`${e}\``).join(", ")}` : "",
  ].join("\n");
}

/** `--profile`: the N = 100 phase under the V8 CPU profiler (inside the server); prints hot spots. */
async function profile() {
  const file = join(mkdtempSync(join(tmpdir(), "dimsum-ws-prof-")), "server.cpuprofile");
  const plan = PLAN.find((p) => p.n === 100 && p.thinkMs === 0);
  // --profile --postgres: the same on one PostgreSQL + Redis instance.
  const row = await withLlm((llm) =>
    process.argv.includes("--postgres")
      ? measureBackend(llm, plan, { ...BACKENDS[1], env: { PROFILE_FILE: file } })
      : measure(llm, plan, { PROFILE_FILE: file }),
  );
  console.log(table([row]));
  console.log(`\nServer self time during the measured phase (profile kept at ${file}):`);
  for (const s of hotSpots(JSON.parse(readFileSync(file, "utf8")), 25)) {
    console.log(`${(100 * s.share).toFixed(1).padStart(5)} %  ${ms(s.ms)}  ${s.name}`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const args = process.argv.slice(2);
  if (args.includes("--profile")) await profile();
  else if (args.includes("--backends")) console.log(await backendsSection());
  else {
    const ns = args.map(Number).filter((x) => x > 0);
    console.log(await run(ns.length > 0 ? ns : undefined, { backends: false }));
  }
}
