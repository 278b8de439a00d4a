// The team server under a load that looks like real use (issue 39). Three processes, as in
// bench/ws-load.mjs: this one (N people), the Dimsum server (`ws-load-server.mjs server`, the wiring
// of `dimsum serve` on one SQLite file) and the real-use fake model (`ws-load-server.mjs real-llm`):
// per answer a time to first token of 0.5–3 s per model call, 30–80 tokens/s, 50–1,000 tokens, 0–3
// tool steps (each a calculator call and a model call), 2 % of answers a minute of tokens; one token
// per SSE event. People: 60 % in their own direct chat with @assistant, 40 % in groups of 4 (one asks,
// three watch the same answer stream; groups use the \`steer\` queue mode, so a question starts at once
// rather than after \`collect\`'s 1.5 s wait for the rest of a burst). Each asker waits 0–30 s, then posts, waits for the answer,
// reads and types for 10–60 s, and posts again, for the phase's length; everyone's socket is signed in
// and subscribed the whole time.
//   added latency at the first token = (POST sent → first text delta on the socket) − the model's own
//                                     time to that token (its earlier calls and this call's wait)
//   added latency at the end         = (POST sent → the answer's message on the socket) − the model's
//                                     own time over all its calls
// Usage: node bench/real-use.mjs [N…] (default 100 1000); REAL_USE_SECONDS (default 120) sets the
// phase; --baseline also runs each N with deltas merged only within one turn of the event loop (frame
// budget 0, as before) and with that and `runs.concurrency` 32 (the old default: a slot held for the
// whole answer, waiting on the model included), in the same run.
import { Agent } from "node:http";
import { cpus } from "node:os";
import { pathToFileURL } from "node:url";
import { WebSocket } from "ws";
import { api, ask, expectStatus, machineTicks, percentile, pool, spawnRole } from "./ws-load.mjs";

const PHASE_MS = Number(process.env.REAL_USE_SECONDS ?? 120) * 1000;
const FIRST_WAIT_MS = 30_000;
const PAUSE_MS = [10_000, 60_000];
const GROUP_SIZE = 4;
const GROUP_SHARE = 0.4;
const ANSWER_TIMEOUT_MS = 240_000;
const TAG = /\[bench:([A-Za-z0-9]+)\]/;
const epoch = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const uniform = ([a, b]) => a + Math.random() * (b - a);

/** One person's socket: signed in, subscribed to one chat; counts deltas, notes each run's first one. */
class Person {
  constructor(base, user, channelId) {
    Object.assign(this, { base, user, channelId, deltas: 0, waiting: new Map(), firstDelta: new Map() });
    this.errors = [];
  }

  async open() {
    const ws = new WebSocket(`${this.base.replace(/^http/, "ws")}/ws`, { perMessageDeflate: false });
    this.ws = ws;
    const frames = {};
    const seen = (type) => new Promise((r) => (frames[type] = r));
    const ready = seen("ready");
    const backlog = seen("backlog");
    ws.on("message", (data) => {
      const at = epoch();
      const text = data.toString();
      if (text.startsWith('{"type":"agent"')) {
        if (!text.includes('"type":"text_delta"')) return;
        this.deltas++;
        const i = text.indexOf('"runId":"');
        const runId = i < 0 ? undefined : text.slice(i + 9, text.indexOf('"', i + 9));
        if (runId && !this.firstDelta.has(runId)) this.firstDelta.set(runId, at);
        return;
      }
      const frame = JSON.parse(text);
      if (frame.type === "message" && frame.message.author.type === "agent") {
        const tag = TAG.exec(frame.message.text)?.[1];
        this.waiting.get(tag)?.(at);
      } else if (frame.type === "run" && frame.run.status === "error") this.errors.push(frame.run.error);
      else frames[frame.type]?.();
    });
    await new Promise((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    ws.send(JSON.stringify({ type: "auth", token: this.user.token }));
    await ready;
    ws.send(JSON.stringify({ type: "subscribe", channelId: this.channelId }));
    await backlog;
  }

  /** Posts one tagged question; resolves with its timings, or `lost`. */
  async exchange(tag, mention) {
    const answered = new Promise((resolve) => {
      this.waiting.set(tag, resolve);
      setTimeout(() => resolve(undefined), ANSWER_TIMEOUT_MS).unref();
    });
    const { token, agent } = this.user;
    const body = { text: `${mention}[bench:${tag}] What do you think about this?` };
    const postAt = epoch();
    const res = await api(this.base, "POST", `/api/channels/${this.channelId}/messages`, {
      body,
      token,
      agent,
    });
    if (res.status !== 201) {
      this.waiting.delete(tag);
      return { tag, lost: true, error: `POST ${res.status} ${JSON.stringify(res.json)}` };
    }
    const runId = res.json.runs?.[0]?.id;
    const endAt = await answered;
    this.waiting.delete(tag);
    if (endAt === undefined) return { tag, lost: true };
    return { tag, lost: false, postAt, firstAt: this.firstDelta.get(runId), endAt };
  }

  close() {
    this.ws?.close();
    this.user.agent.destroy();
  }
}

/** N accounts, their chats (direct, or groups of 4 of which one asks) and open sockets. */
async function setUp(base, owner, n) {
  const password = "bench-password-1";
  const users = await pool(
    Array.from({ length: n }, (_, i) => i),
    16,
    async (i) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const body = { username: `p${i}`, password, role: "member" };
      const user = await expectStatus(
        api(base, "POST", "/api/users", { body, ...owner }),
        201,
        "create user",
      );
      const login = { body: { username: `p${i}`, password }, agent };
      const { token } = await expectStatus(api(base, "POST", "/api/auth/login", login), 200, "login");
      return { id: user.id, token, agent };
    },
  );
  const grouped = Math.floor((n * GROUP_SHARE) / GROUP_SIZE) * GROUP_SIZE;
  const people = [];
  const askers = [];
  await pool(
    Array.from({ length: n - grouped + grouped / GROUP_SIZE }, (_, k) => k),
    16,
    async (k) => {
      const solo = k < n - grouped;
      const members = solo
        ? [users[k]]
        : users.slice(n - grouped + (k - (n - grouped)) * GROUP_SIZE).slice(0, GROUP_SIZE);
      const [first, ...rest] = members;
      const chat = solo
        ? { kind: "direct", name: `chat ${k}`, agentIds: ["assistant"] }
        : { kind: "group", name: `group ${k}`, agentIds: ["assistant"], userIds: rest.map((u) => u.id) };
      const channel = await expectStatus(
        api(base, "POST", "/api/channels", { body: chat, token: first.token, agent: first.agent }),
        201,
        "create chat",
      );
      const group = members.map((u) => new Person(base, u, channel.id));
      people.push(...group);
      askers.push({ person: group[0], mention: solo ? "" : "@assistant " });
    },
  );
  return { people, askers };
}

/** Every asker posts, waits, pauses 10–60 s, and posts again until the phase is over. */
async function drive(askers) {
  const results = [];
  const end = performance.now() + PHASE_MS;
  await Promise.all(
    askers.map(async ({ person, mention }, i) => {
      await sleep(Math.random() * FIRST_WAIT_MS);
      for (let k = 0; performance.now() < end; k++) {
        results.push(await person.exchange(`a${i}m${k}`, mention));
        await sleep(uniform(PAUSE_MS));
      }
    }),
  );
  return results;
}

async function measure(llm, n, label, env) {
  const server = await spawnRole("server", { LLM_URL: llm.url, WS_LOAD_GROUP_QUEUE: "steer", ...env }, [
    "--expose-gc",
  ]);
  const ownerAgent = new Agent({ keepAlive: true, maxSockets: 16 });
  let people = [];
  try {
    const base = server.url;
    const setup = await expectStatus(
      api(base, "POST", "/api/auth/setup", { body: { username: "owner", password: "bench-owner-pass" } }),
      201,
      "setup",
    );
    const owner = { token: setup.token, agent: ownerAgent };
    const t0 = performance.now();
    const built = await setUp(base, owner, n);
    people = built.people;
    const memBefore = await ask(server.child, "mem");
    await pool(people, 50, (p) => p.open());
    const memAfter = await ask(server.child, "mem");
    const setupMs = performance.now() - t0;
    await Promise.all([ask(server.child, "reset"), ask(llm.child, "reset")]);
    const ticks0 = machineTicks();
    const cpu0 = process.cpuUsage();
    const start = performance.now();
    const results = await drive(built.askers);
    const wallMs = performance.now() - start;
    await sleep(200);
    const [stats, llmStats, { timings }] = await Promise.all([
      ask(server.child, "stats"),
      ask(llm.child, "stats"),
      ask(llm.child, "timings"),
    ]);
    const ticks1 = machineTicks();
    const used = process.cpuUsage(cpu0);
    const done = results.filter((r) => !r.lost);
    const first = [];
    const end = [];
    for (const r of done) {
      const t = timings[r.tag];
      if (!t) continue;
      if (r.firstAt !== undefined && t.firstTextOwnMs !== undefined)
        first.push(r.firstAt - r.postAt - t.firstTextOwnMs);
      end.push(r.endAt - r.postAt - t.ownMs);
      if (process.env.REAL_USE_DEBUG && r.endAt - r.postAt - t.ownMs > 300)
        process.stderr.write(
          `slow end: ${JSON.stringify({ r, t, firstAdded: r.firstAt - r.postAt - t.firstTextOwnMs })}\n`,
        );
    }
    const deltas = people.reduce((s, p) => s + p.deltas, 0);
    const machine =
      ticks0 && ticks1
        ? (cpus().length * (ticks1.busy - ticks0.busy)) / (ticks1.total - ticks0.total)
        : Number.NaN;
    return {
      label,
      n,
      askers: built.askers.length,
      setupMs,
      answers: results.length,
      lost: results.length - done.length,
      errors: [...people.flatMap((p) => p.errors), ...results.filter((r) => r.error).map((r) => r.error)],
      wallMs,
      runsPerSec: done.length / (wallMs / 1000),
      first: [50, 99, 100].map((p) => percentile(first, p)),
      end: [50, 99, 100].map((p) => percentile(end, p)),
      deltas,
      cpuMs: stats.cpuMs,
      serverShare: stats.cpuMs / wallMs,
      llmShare: llmStats.cpuMs / wallMs,
      clientShare: (used.user + used.system) / 1000 / wallMs,
      machineShare: machine,
      perPerson: {
        heap: (memAfter.heapUsed - memBefore.heapUsed) / n,
        rss: (memAfter.rss - memBefore.rss) / n,
      },
      peakLive: stats.peakLive,
      perAnswer: {
        heap:
          stats.peakLive.live > 0 ? (stats.peakLive.heapUsed - memAfter.heapUsed) / stats.peakLive.live : NaN,
        rss: stats.peakLive.live > 0 ? (stats.peakLive.rss - memAfter.rss) / stats.peakLive.live : NaN,
      },
      peakRss: stats.peakRss,
      queue: stats.queue,
      loopDelay: [stats.loopDelayP99Ms, stats.loopDelayMaxMs],
      droppedSlow: stats.hub.droppedSlow,
    };
  } finally {
    for (const p of people) p.close();
    ownerAgent.destroy();
    if (server.child.exitCode === null) {
      const exited = new Promise((r) => server.child.once("exit", r));
      server.child.send({ type: "stop" });
      await exited;
    }
  }
}

const ms = (x) => (Number.isFinite(x) ? `${x.toFixed(1)} ms` : "–");
const kib = (x) => (Number.isFinite(x) ? `${(x / 1024).toFixed(1)} KiB` : "–");
const pct = (x) => `${(100 * x).toFixed(0)} %`;

function table(rows) {
  const line = (cells) => `| ${cells.join(" | ")} |`;
  const out = [
    line(["measure", ...rows.map((r) => `${r.label}, N = ${r.n}`)]),
    line(["---", ...rows.map(() => "---")]),
  ];
  const add = (label, f) => out.push(line([label, ...rows.map(f)]));
  add("people asking / watching (groups of 4)", (r) => `${r.askers} / ${r.n - r.askers}`);
  add("answers (completed runs/s)", (r) => `${r.answers} (${r.runsPerSec.toFixed(1)}/s)`);
  add("**added latency at the first token p50 / p99**", (r) => `**${ms(r.first[0])} / ${ms(r.first[1])}**`);
  add("**added latency at the end p50 / p99**", (r) => `**${ms(r.end[0])} / ${ms(r.end[1])}**`);
  add("added latency max: first token / end", (r) => `${ms(r.first[2])} / ${ms(r.end[2])}`);
  add("**lost answers** (run errors)", (r) => `**${r.lost}** (${r.errors.length})`);
  add("answers live at once, peak", (r) => String(r.peakLive.live));
  add(
    "answers that waited to start (queue wait p99)",
    (r) => `${r.queue.startedAfterWaiting} (${ms(r.queue.waitP99Ms)})`,
  );
  add("delta frames delivered (all sockets)", (r) => String(r.deltas));
  add("server CPU per 1,000 delta frames delivered (all of the phase's work)", (r) =>
    ms((1000 * r.cpuMs) / Math.max(1, r.deltas)),
  );
  add("server CPU per completed answer", (r) => ms(r.cpuMs / Math.max(1, r.answers - r.lost)));
  add(
    "CPU, % of one core: server / fake model / clients / whole machine (2 cores = 200 %)",
    (r) => `${pct(r.serverShare)} / ${pct(r.llmShare)} / ${pct(r.clientShare)} / ${pct(r.machineShare)}`,
  );
  add(
    "memory per connected person: heap / RSS (after GC)",
    (r) => `${kib(r.perPerson.heap)} / ${kib(r.perPerson.rss)}`,
  );
  add(
    "memory per live answer at the peak: heap / RSS (no GC)",
    (r) => `${kib(r.perAnswer.heap)} / ${kib(r.perAnswer.rss)}`,
  );
  add("server RSS peak", (r) => `${(r.peakRss / 2 ** 20).toFixed(0)} MiB`);
  add("server event-loop delay p99 / max", (r) => `${ms(r.loopDelay[0])} / ${ms(r.loopDelay[1])}`);
  add("WS clients dropped as too slow", (r) => String(r.droppedSlow));
  add("setup (accounts, chats, sockets)", (r) => `${(r.setupMs / 1000).toFixed(0)} s`);
  return out.join("\n");
}

/**
 * The BENCHMARKS.md section: every N of `ns` (default 100 and 1,000), with `baseline` (as `npm run
 * bench` calls it) each N also with the frame budget 0 and with the old 32 slots, in the same run.
 */
export async function run(ns = [100, 1000], { baseline = true } = {}) {
  const llm = await spawnRole("real-llm");
  const rows = [];
  try {
    for (const n of ns) {
      const variants = [{ label: "now", env: {} }];
      if (baseline) {
        variants.push(
          { label: "deltas per loop turn (frame budget 0)", env: { WS_LOAD_DELTA_FRAME_MS: "0" } },
          {
            label: "old: runs.concurrency 32, frame budget 0",
            env: { WS_LOAD_RUN_CONCURRENCY: "32", WS_LOAD_DELTA_FRAME_MS: "0" },
          },
        );
      }
      // REAL_USE_REVERSE=1: the variants in the other order, to tell their effect from the machine's drift.
      if (process.env.REAL_USE_REVERSE) variants.reverse();
      for (const v of variants) {
        process.stderr.write(`real-use: ${v.label}, N=${n}…\n`);
        rows.push(await measure(llm, n, v.label, v.env));
      }
    }
  } finally {
    llm.child.kill("SIGTERM");
  }
  const errors = rows.flatMap((r) => r.errors).slice(0, 3);
  return [
    "## Team server under real use: model speeds, streams, pauses, groups (issue 39)",
    "",
    `\`node bench/real-use.mjs${baseline ? " --baseline" : ""} ${ns.join(" ")}\` (REAL_USE_SECONDS=${PHASE_MS / 1000}). Three processes: the N people, the Dimsum server (the wiring of \`dimsum serve\`, one SQLite file) and the real-use fake model (OpenAI protocol, one token per SSE event): per answer a time to first token of 0.5–3 s for each model call, 30–80 tokens/s, 50–1,000 tokens (log-uniform), 0–3 tool steps before the answer (50/25/15/10 %; each a calculator call and another model call), 2 % of answers a minute of tokens. 60 % of people have a direct chat with @assistant, 40 % are in groups of 4 where one asks and three watch the same stream (groups use the \`steer\` queue mode, so a question starts at once rather than after \`collect\`'s 1.5 s wait for a burst). Each asker waits 0–30 s, then asks, waits for the answer, reads and types 10–60 s, and asks again until the phase ends; every socket stays open and subscribed. Added latency at the first token = POST sent → first text delta on the socket, minus the model's own time to that token (its earlier calls and this call's wait); at the end = POST → the answer's message, minus the model's own time over all its calls (the fake times itself, so its own lateness is not counted). Memory per person: the server's heap and RSS after a full GC, before and after the N sockets opened, over N; per live answer: at the phase's peak of live answers, over that peak, against the idle figure (no GC: an upper bound). The machine was shared with other work (the CPU row's last figure is the whole machine's busy share): compare rows of the same run.`,
    "",
    table(rows),
    errors.length > 0 ? `\nFirst errors: ${errors.map((e) => `\`${e}\``).join(", ")}` : "",
  ].join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const args = process.argv.slice(2);
  const ns = args.map(Number).filter((x) => x > 0);
  console.log(await run(ns.length > 0 ? ns : undefined, { baseline: args.includes("--baseline") }));
}
