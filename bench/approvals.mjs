// Approvals and queue modes: what a waiting run costs when it is approved, and what a chat's
// `collect` mode adds before an answer starts.
// Two processes: the Dimsum server (`ws-load-server.mjs server`: the wiring of `dimsum serve`, SQLite in
// a temp home) and this one, which is the client (HTTP on one keep-alive connection, a WebSocket for
// the run events) and the fake LLM on loopback. Both ends of every interval are timed here, on one clock:
//   approval resume = `POST /api/runs/:id/approvals/:callId` sent → the fake LLM has read the next request
//   fresh start     = `POST /api/channels/:id/messages` sent → the fake LLM has read the run's first request
// Each approval cycle posts a message; the model calls `calculator` (on the agent's ask-first list), the
// run ends `waiting`, the bench approves it and the run goes on to its answer. The fresh start of the
// same cycle is the baseline, so both come from the same agent, store and moment.
// Queue modes: one message at a time (each answered before the next) to a `followup` chat and to a
// `collect` chat, interleaved; collect starts the run once no message came for `queue.collectMs`.
// Standalone: `node bench/approvals.mjs` (after `npm run build`).
import { fork } from "node:child_process";
import { Agent, request } from "node:http";
import { cpus, loadavg, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { WebSocket } from "ws";
import { startFakeLlmServer } from "../dist/testing/fake-llm-server.js";

const here = dirname(fileURLToPath(import.meta.url));
/** Measured approval cycles, after WARMUP ones, spread round-robin over CHATS direct chats. */
const APPROVALS = 200;
const WARMUP = 20;
const CHATS = 10;
/** Messages per queue mode (plus QUEUE_WARMUP each, not counted). */
const QUEUE_MESSAGES = 30;
const QUEUE_WARMUP = 2;
/** The server's `queue.collectMs`: the default (ws-load-server.mjs reads no config file). */
const COLLECT_MS = 1500;
const TIMEOUT_MS = 30_000;
const TAG = /\[bench:([A-Za-z0-9]+)\]/;

/** The fake LLM: records when each request arrived, by the bench tag of its newest user message. */
async function startLlm() {
  const arrivals = new Map();
  const waiters = [];
  const textOf = (m) => (typeof m?.content === "string" ? m.content : JSON.stringify(m?.content ?? ""));
  const server = await startFakeLlmServer({
    defaultTurn: (req) => {
      const at = performance.now();
      const messages = Array.isArray(req.body?.messages) ? req.body.messages : [];
      const user = messages.findLast((m) => m?.role === "user" && TAG.test(textOf(m)));
      const tag = user ? TAG.exec(textOf(user))[1] : "none";
      const list = arrivals.get(tag) ?? [];
      list.push(at);
      arrivals.set(tag, list);
      for (const w of waiters.filter((x) => x.tag === tag && list.length > x.n)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(list[w.n]);
      }
      const usage = { input: 300, output: 10 };
      if (messages.at(-1)?.role === "tool") return { text: `It is ${textOf(messages.at(-1))}.`, usage };
      if (textOf(user).includes("[calc]")) {
        return { toolCalls: [{ name: "calculator", args: { expression: "2+2" } }], usage };
      }
      return { text: "A short answer.", usage };
    },
  });
  // Keep the request log (bodies with every tool schema) from growing.
  const trim = setInterval(() => server.requests.splice(0), 500);
  return {
    url: server.url,
    count: (tag) => arrivals.get(tag)?.length ?? 0,
    /** When the tag's n-th request (0-based) arrived. */
    arrival(tag, n) {
      const list = arrivals.get(tag) ?? [];
      if (list.length > n) return Promise.resolve(list[n]);
      return new Promise((resolve, reject) => {
        const w = { tag, n, resolve };
        waiters.push(w);
        setTimeout(() => {
          const i = waiters.indexOf(w);
          if (i >= 0) waiters.splice(i, 1);
          reject(new Error(`no model request #${n + 1} for ${tag} within ${TIMEOUT_MS} ms`));
        }, TIMEOUT_MS).unref();
      });
    },
    close() {
      clearInterval(trim);
      return server.close();
    },
  };
}

/** The Dimsum server process; resolves once it printed its URL. */
function startServer(llmUrl) {
  return new Promise((resolve, reject) => {
    const child = fork(join(here, "ws-load-server.mjs"), ["server"], {
      env: { ...process.env, LLM_URL: llmUrl },
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
    child.once("exit", (code) => reject(new Error(`the server process exited early (${code})`)));
  });
}

async function stopServer(child) {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.send({ type: "stop" });
  await exited;
}

/** One JSON request on the bench's keep-alive connection; throws unless the status is `expect`. */
function api(base, agent, token, method, path, body, expect = 200) {
  const data = body === undefined ? undefined : JSON.stringify(body);
  const headers = { accept: "application/json" };
  if (data !== undefined) headers["content-type"] = "application/json";
  if (token) headers.authorization = `Bearer ${token}`;
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers, agent }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        const json = text ? JSON.parse(text) : undefined;
        if (res.statusCode !== expect) reject(new Error(`${method} ${path}: HTTP ${res.statusCode} ${text}`));
        else resolve(json);
      });
    });
    req.on("error", reject);
    req.end(data);
  });
}

/** A signed-in WebSocket subscribed to the chats; keeps the `run` frames and waits for one. */
async function openSocket(base, token, channelIds) {
  const ws = new WebSocket(`${base.replace(/^http/, "ws")}/ws`, { perMessageDeflate: false });
  const runs = [];
  const waiters = [];
  const control = new Map();
  ws.on("message", (data) => {
    const text = data.toString();
    if (text.startsWith('{"type":"agent"')) return; // token deltas and tool events: not needed here
    const frame = JSON.parse(text);
    if (frame.type === "run") {
      runs.push(frame.run);
      for (const w of waiters.filter((x) => x.test(frame.run))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(frame.run);
      }
    } else if (frame.type === "error") process.stderr.write(`approvals: error frame ${text}\n`);
    else control.get(frame.type)?.(frame);
  });
  const next = (type) => new Promise((r) => control.set(type, r));
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  const ready = next("ready");
  ws.send(JSON.stringify({ type: "auth", token }));
  await ready;
  for (const channelId of channelIds) {
    const backlog = next("backlog");
    ws.send(JSON.stringify({ type: "subscribe", channelId }));
    await backlog;
  }
  return {
    /** The first run frame (seen from index `from` on, or still to come) that passes the test. */
    waitRun(test, from = 0) {
      const seen = runs.slice(from).find(test);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const w = { test, resolve };
        waiters.push(w);
        setTimeout(() => {
          const i = waiters.indexOf(w);
          if (i >= 0) waiters.splice(i, 1);
          reject(new Error(`no matching run event within ${TIMEOUT_MS} ms`));
        }, TIMEOUT_MS).unref();
      });
    },
    get seen() {
      return runs.length;
    },
    close: () => ws.close(),
  };
}

const ENDED = ["done", "error", "cancelled"];

function percentile(xs, p) {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}

const median = (xs) => percentile(xs, 50);
const ms = (x) => `${x.toFixed(1)} ms`;

/**
 * One approval cycle in `chat`: post, the model calls `calculator`, the run waits; approve it and wait
 * for the answer. Returns both intervals and the checks (no model call while waiting, run done).
 */
async function approvalCycle(ctx, chat, tag) {
  const { call, llm, ws } = ctx;
  const from = ws.seen;
  const t0 = performance.now();
  const posted = await call(
    "POST",
    `/api/channels/${chat}/messages`,
    { text: `[bench:${tag}] [calc] 2+2?` },
    201,
  );
  const runId = posted.runs?.[0]?.id;
  if (!runId) throw new Error(`the message started no run: ${JSON.stringify(posted)}`);
  const first = await llm.arrival(tag, 0);
  await ws.waitRun((r) => r.id === runId && (r.status === "waiting" || ENDED.includes(r.status)), from);
  const run = await call("GET", `/api/runs/${runId}`);
  if (run.status !== "waiting")
    throw new Error(`run ${runId} is ${run.status}, not waiting (${run.error ?? ""})`);
  const callId = run.pendingApprovals?.[0]?.callId;
  const callsWhileWaiting = llm.count(tag) - 1;
  const t1 = performance.now();
  await call("POST", `/api/runs/${runId}/approvals/${encodeURIComponent(callId)}`, { decision: "approve" });
  const answeredMs = performance.now() - t1;
  const second = await llm.arrival(tag, 1);
  const ended = await ws.waitRun((r) => r.id === runId && ENDED.includes(r.status), from);
  return {
    fresh: first - t0,
    resume: second - t1,
    answeredMs,
    callsWhileWaiting,
    done: ended.status === "done",
    requests: llm.count(tag),
  };
}

/** One message to a chat in `followup` or `collect` mode: POST → first model request, then its answer. */
async function queueCycle(ctx, chat, mode, tag) {
  const { call, llm, ws } = ctx;
  const from = ws.seen;
  const t0 = performance.now();
  const posted = await call("POST", `/api/channels/${chat}/messages`, { text: `[bench:${tag}] Hello.` }, 201);
  const queued = posted.queued?.[0]?.mode;
  if (mode === "collect" && queued !== "collect") throw new Error(`not collected: ${JSON.stringify(posted)}`);
  if (mode === "followup" && !posted.runs?.[0]) throw new Error(`no run started: ${JSON.stringify(posted)}`);
  const first = await llm.arrival(tag, 0);
  const ended = await ws.waitRun((r) => r.channelId === chat && ENDED.includes(r.status), from);
  return { latency: first - t0, done: ended.status === "done" };
}

/** Runs the whole bench; returns the figures. */
async function measure() {
  const loadBefore = loadavg();
  const llm = await startLlm();
  const server = await startServer(llm.url);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let ws;
  try {
    const base = server.url;
    const setup = await api(
      base,
      agent,
      undefined,
      "POST",
      "/api/auth/setup",
      {
        username: "owner",
        password: "bench-owner-pass",
      },
      201,
    );
    const call = (method, path, body, expect) => api(base, agent, setup.token, method, path, body, expect);
    await call("PATCH", "/api/agents/assistant", { askFirst: ["calculator"] });
    const chat = async (name, queueMode) => {
      const created = await call(
        "POST",
        "/api/channels",
        { kind: "direct", name, agentIds: ["assistant"] },
        201,
      );
      await call("PATCH", `/api/channels/${created.id}`, { queueMode });
      return created.id;
    };
    const approvalChats = [];
    for (let i = 0; i < CHATS; i++) approvalChats.push(await chat(`approvals ${i}`, "followup"));
    const followupChat = await chat("followup", "followup");
    const collectChat = await chat("collect", "collect");
    ws = await openSocket(base, setup.token, [...approvalChats, followupChat, collectChat]);
    const ctx = { call, llm, ws };

    process.stderr.write(`approvals: ${WARMUP} + ${APPROVALS} approval cycles…\n`);
    const cycles = [];
    const started = performance.now();
    for (let i = 0; i < WARMUP + APPROVALS; i++) {
      const r = await approvalCycle(ctx, approvalChats[i % CHATS], `a${i}`);
      if (i >= WARMUP) cycles.push(r);
    }
    const approvalsWallS = (performance.now() - started) / 1000;

    process.stderr.write(
      `approvals: ${QUEUE_WARMUP + QUEUE_MESSAGES} messages each in followup and collect…\n`,
    );
    const followup = [];
    const collect = [];
    for (let k = 0; k < QUEUE_WARMUP + QUEUE_MESSAGES; k++) {
      const f = await queueCycle(ctx, followupChat, "followup", `f${k}`);
      const c = await queueCycle(ctx, collectChat, "collect", `c${k}`);
      if (k < QUEUE_WARMUP) continue;
      followup.push(f);
      collect.push(c);
    }
    return { cycles, approvalsWallS, followup, collect, load: [loadBefore[0], loadavg()[0]] };
  } finally {
    ws?.close();
    agent.destroy();
    await stopServer(server.child);
    await llm.close();
  }
}

function section(m) {
  const resume = m.cycles.map((c) => c.resume);
  const fresh = m.cycles.map((c) => c.fresh);
  const answered = m.cycles.map((c) => c.answeredMs);
  const perCycle = m.cycles.map((c) => c.resume / c.fresh);
  const waitingCalls = m.cycles.reduce((s, c) => s + c.callsWhileWaiting, 0);
  const notDone = m.cycles.filter((c) => !c.done || c.requests !== 2).length;
  const fl = m.followup.map((x) => x.latency);
  const co = m.collect.map((x) => x.latency);
  const over = co.map((x) => x - COLLECT_MS);
  const added = [50, 95].map((p) => percentile(co, p) - percentile(fl, p));
  const within = Math.max(...added.map((a) => Math.abs(a - COLLECT_MS)));
  const queueNotDone = [...m.followup, ...m.collect].filter((x) => !x.done).length;
  const line = (cells) => `| ${cells.join(" | ")} |`;
  const row = (label, xs, n = xs.length) => line([label, String(n), ms(median(xs)), ms(percentile(xs, 95))]);
  const cpu = cpus();
  return [
    "## Approvals and queue modes",
    "",
    `Two processes: the Dimsum server (\`bench/ws-load-server.mjs server\`, the wiring of \`dimsum serve\`: \`openStorage\` + \`buildTeam\` + \`createServer\` + the team routes, SQLite file in a temp home) and the bench, which is both the client (real HTTP on one keep-alive connection with a bearer token, a WebSocket for the run events) and the fake LLM on loopback (OpenAI protocol, answers at once). Both ends of every interval are timed in the bench process on one clock; the end is the moment the fake LLM has read a request's body (its turn function runs). Commands: \`npm run bench\` (all benches), \`npm run build && node bench/approvals.mjs\` (this one; also \`npm run bench -- approvals\`).`,
    "",
    `**Approvals.** @assistant has \`askFirst: ["calculator"]\`. One cycle: post a message in a direct chat (queue mode \`followup\`); the model calls \`calculator\` with \`2+2\`; the run ends \`waiting\` (WebSocket \`run\` event); the bench reads the call id from \`GET /api/runs/:id\` (\`pendingApprovals[0].callId\`) and sends \`POST /api/runs/:id/approvals/:callId\` \`{"decision":"approve"}\`; the server resumes the run from its stored checkpoint, runs the calculator and makes the next model request; the bench waits for the run's \`done\` event before the next cycle. ${APPROVALS} cycles after ${WARMUP} warm-up ones, round-robin over ${CHATS} chats (so a session holds at most ${(4 * (APPROVALS + WARMUP)) / CHATS} messages). Baseline: the fresh start of the same cycles, message POST → the run's first model request (same agent, same store, interleaved).`,
    "",
    line(["interval", "n", "p50", "p95"]),
    line(["---", "---:", "---:", "---:"]),
    row("**approval POST → next model request** (resume from the checkpoint)", resume),
    row("message POST → first model request of a fresh run (baseline)", fresh),
    row("approval POST → its HTTP 200", answered),
    "",
    `Ratio approval resume / fresh start: **${(median(resume) / median(fresh)).toFixed(2)}×** at p50, ${(percentile(resume, 95) / percentile(fresh, 95)).toFixed(2)}× at p95 (per cycle: median ${median(perCycle).toFixed(2)}×). Model requests while a run waited: ${waitingCalls} (expected 0); cycles not ending \`done\` after exactly 2 model requests: ${notDone}. ${APPROVALS + WARMUP} cycles took ${m.approvalsWallS.toFixed(1)} s (${((1000 * m.approvalsWallS) / (APPROVALS + WARMUP)).toFixed(1)} ms each, both model calls included).`,
    "",
    `**Queue modes.** One message at a time (each answered before the next), ${QUEUE_MESSAGES} per mode after ${QUEUE_WARMUP} warm-up, interleaved between a \`followup\` chat and a \`collect\` chat (\`PATCH /api/channels/:id {"queueMode": …}\`) of the same agent; message POST → first model request. The collect window is the default \`queue.collectMs\` = ${COLLECT_MS} ms.`,
    "",
    line(["mode", "n", "p50", "p95"]),
    line(["---", "---:", "---:", "---:"]),
    row("`followup` (starts at once)", fl),
    row(`\`collect\` (window ${COLLECT_MS} ms)`, co),
    row(`\`collect\` − window (${COLLECT_MS} ms)`, over),
    "",
    `Added delay of collect (collect − followup): **${ms(added[0])}** at p50, ${ms(added[1])} at p95: the configured window to within **${ms(within)}**. Each collected message started its run ${ms(Math.min(...over))}–${ms(Math.max(...over))} after the window ended (timer lateness plus the run's start, which followup pays too). Runs not ending \`done\`: ${queueNotDone}.`,
    "",
    `Machine: ${cpu.length} cores (${cpu[0]?.model ?? "cpu"}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC; 1-minute load average ${m.load[0].toFixed(1)} before and ${m.load[1].toFixed(1)} after the bench (other work shared the machine when it was above 1).`,
  ].join("\n");
}

/** The bench section for BENCHMARKS.md. */
export async function run() {
  return section(await measure());
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(await run());
}
