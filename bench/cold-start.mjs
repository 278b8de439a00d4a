// Cold start (issue 15): whole processes, spawn to exit, each against its baseline in the same run.
//   dimsum run      (import, 10 calculator turns, the answer, exit) vs bench/fetch-loop.mjs, a
//                   hand-written fetch + SSE loop sending the same first request and the same turns
//   dimsum --help   vs node -e 0
//   dimsum memory search / kb search   vs node -e 0 + the search itself (bench/search-only.mjs)
// On this Node and on Node 22 when one is found (DIMSUM_BENCH_NODE22, or the `node@22` npm package
// installed with `npm install --no-save --prefix /tmp/node22 node@22`). The fake LLM runs in its own
// process. Run `npm run build` first; `node bench/cold-start.mjs` prints the section.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { SqliteMemoryStore } from "../dist/memory/sqlite-memory-store.js";
import { openDatabase } from "../dist/store/database.js";
import { rng, SYLLABLES, zipfWords } from "./synthetic-text.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const BIN = join(root, "bin/dimsum.js");
const ROUNDS = Number(process.env.COLD_ROUNDS ?? 15);
const TOOL_TURNS = 10;
const MEMORIES = 2_000;
const USER = "bench";

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

function node22() {
  const candidates = [process.env.DIMSUM_BENCH_NODE22, "/tmp/node22/node_modules/node/bin/node"];
  for (const path of candidates) {
    if (!path || !existsSync(path)) continue;
    const r = spawnSync(path, ["--version"], { encoding: "utf8" });
    if (r.status === 0 && Number(r.stdout.slice(1).split(".")[0]) >= 22) return path;
  }
  return undefined;
}

export function startServer(capture) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, "bench/cold-start-server.mjs")], {
      env: { ...process.env, TOOL_ROUNDS: String(TOOL_TURNS), CAPTURE: capture },
      stdio: ["ignore", "pipe", "inherit"],
    });
    child.stdout.once("data", (d) => resolve({ url: String(d).trim(), child }));
    child.once("error", reject);
  });
}

/** A home with MEMORIES memories of USER and a knowledge base "docs" of 50 short files. */
function seedHome(home, env) {
  mkdirSync(home, { recursive: true });
  const random = rng(15);
  const word = zipfWords(random, SYLLABLES, 5_000);
  const sentence = (n) => Array.from({ length: n }, word).join(" ");
  const db = openDatabase(join(home, "dimsum.db"));
  const store = new SqliteMemoryStore(db);
  const texts = Array.from({ length: MEMORIES }, () => `the user ${sentence(12)}`);
  const seeded = Promise.all(texts.map((text) => store.remember({ userId: USER, text, type: "semantic" })));
  const docs = join(home, "docs");
  mkdirSync(docs);
  for (let i = 0; i < 50; i++) {
    const paragraphs = Array.from({ length: 20 }, () => `${sentence(60)}.`);
    writeFileSync(join(docs, `doc-${i}.md`), `# Document ${i}\n\n${paragraphs.join("\n\n")}\n`);
  }
  return seeded.then(() => {
    db.close();
    const r = spawnSync(process.execPath, [BIN, "kb", "add", "docs", docs], { env, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`kb add failed: ${r.stderr}`);
  });
}

// bash's `time` reports the child's wall clock and its CPU time (user + system, from getrusage):
// CPU time hardly moves when other work shares the machine, wall time does.
const TIMED = 'TIMEFORMAT="@@%3R %3U %3S"; { time "$@" 2>/dev/null; } 2>&1';

/** Runs `args` with `node` once; returns wall and CPU milliseconds and stdout. */
export function timed(node, args, env, cwd) {
  const r = spawnSync("bash", ["-c", TIMED, "timed", node, ...args], { env, cwd, encoding: "utf8" });
  const at = r.stdout.lastIndexOf("@@");
  const [real, user, sys] = r.stdout
    .slice(at + 2)
    .trim()
    .split(" ")
    .map(Number);
  if (r.status !== 0 || at < 0) {
    const plain = spawnSync(node, args, { env, cwd, encoding: "utf8" });
    throw new Error(`${args.join(" ")} failed (${plain.status}): ${plain.stderr}`);
  }
  return { ms: real * 1000, cpu: (user + sys) * 1000, stdout: r.stdout.slice(0, at) };
}

/** Whether this Node can load better-sqlite3 as installed (its native module is built for one ABI). */
function sqliteLoads(node) {
  const r = spawnSync(node, ["-e", "new (require('better-sqlite3'))(':memory:')"], { cwd: root });
  return r.status === 0;
}

async function measure(node, url, work) {
  const capture = join(work, "first-request.json");
  const home = join(work, "home");
  const env = {
    PATH: process.env.PATH,
    HOME: work,
    OPENAI_API_KEY: "k",
    OPENAI_BASE_URL: `${url}/v1`,
    DIMSUM_MODEL: "openai:gpt-bench",
    DIMSUM_HOME: home,
    DIMSUM_USER: USER,
  };
  const words = readFileSync(join(home, "docs/doc-0.md"), "utf8").split(/\s+/).slice(10, 13).join(" ");
  const runArgs = [BIN, "run", "--max-iterations", "20", "add the numbers"];
  // The working folder is an empty project (no skills, tools or mcp.json of its own).
  const cwd = join(work, "project");
  mkdirSync(cwd, { recursive: true });
  const first = timed(node, runArgs, env, cwd);
  if (!first.stdout.includes("All done")) throw new Error(`dimsum run did not answer: ${first.stdout}`);
  const loopArgs = [join(root, "bench/fetch-loop.mjs"), capture, `${url}/v1`, "k"];
  const withSqlite = sqliteLoads(node);
  const commands = {
    node: ["-e", "0"],
    loop: loopArgs,
    run: runArgs,
    help: [BIN, "--help"],
    ...(withSqlite
      ? {
          memory: [BIN, "memory", "search", words],
          memorySearch: [join(root, "bench/search-only.mjs"), "memory", join(home, "dimsum.db"), USER, words],
          kb: [BIN, "kb", "search", "docs", words],
          kbSearch: [join(root, "bench/search-only.mjs"), "kb", join(home, "dimsum.db"), "docs", words],
        }
      : {}),
  };
  const wall = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
  const cpu = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
  for (let i = 0; i < ROUNDS + 1; i++) {
    // Interleaved, so machine noise hits every command alike; the first round warms the disk cache.
    for (const [name, args] of Object.entries(commands)) {
      const r = timed(node, args, env, cwd);
      if (i === 0) continue;
      // The search itself is timed inside its process, the same figure for both columns.
      wall[name].push(name.endsWith("Search") ? Number(r.stdout) : r.ms);
      cpu[name].push(name.endsWith("Search") ? Number(r.stdout) : r.cpu);
    }
  }
  const medians = (xs) => Object.fromEntries(Object.entries(xs).map(([k, v]) => [k, median(v)]));
  return { wall: medians(wall), cpu: medians(cpu) };
}

function rows(version, { wall: m, cpu: c }) {
  const f = (ms) => `${ms.toFixed(0)} ms`;
  const plus = (ms) => `${ms >= 0 ? "+" : "−"}${f(Math.abs(ms))}`;
  const out = [
    `| ${version} | \`dimsum run\`, ${TOOL_TURNS} tool turns + answer | ${f(m.run)} / ${f(c.run)} | hand-written fetch loop ${f(m.loop)} / ${f(c.loop)} | **${(m.run / m.loop).toFixed(2)}×** / ${(c.run / c.loop).toFixed(2)}× | ≤ 1.10× |`,
    `| ${version} | \`dimsum --help\` | ${f(m.help)} / ${f(c.help)} | \`node -e 0\` ${f(m.node)} / ${f(c.node)} | **${plus(m.help - m.node)}** / ${plus(c.help - c.node)} | ≤ +60 ms |`,
  ];
  if (m.memory !== undefined) {
    out.push(
      `| ${version} | \`dimsum memory search\` (${MEMORIES} memories) | ${f(m.memory)} / ${f(c.memory)} | \`node -e 0\` (row above) + the search ${f(m.memorySearch)} | **${plus(m.memory - m.node - m.memorySearch)}** / ${plus(c.memory - c.node - c.memorySearch)} | ≤ +120 ms |`,
      `| ${version} | \`dimsum kb search\` (50 files) | ${f(m.kb)} / ${f(c.kb)} | \`node -e 0\` (row above) + the search ${f(m.kbSearch)} | **${plus(m.kb - m.node - m.kbSearch)}** / ${plus(c.kb - c.node - c.kbSearch)} | ≤ +120 ms |`,
    );
  } else
    out.push(
      `| ${version} | memory / kb search | — | better-sqlite3 is built for another Node ABI | — | — |`,
    );
  return out;
}

export async function run() {
  const work = mkdtempSync(join(tmpdir(), "dimsum-cold-"));
  const { url, child } = await startServer(join(work, "first-request.json"));
  try {
    const home = join(work, "home");
    await seedHome(home, { ...process.env, DIMSUM_HOME: home });
    const nodes = [process.execPath, node22()].filter(Boolean);
    const table = [];
    for (const node of nodes) {
      const version = spawnSync(node, ["--version"], { encoding: "utf8" }).stdout.trim();
      process.stderr.write(`cold-start: ${version}…\n`);
      table.push(...rows(`Node ${version}`, await measure(node, url, work)));
    }
    return [
      "## Cold start (issue 15)",
      "",
      `Whole processes, spawn to exit, median of ${ROUNDS} interleaved rounds after one warm-up round; \`node bench/cold-start.mjs\` (also in \`npm run bench\`). \`dimsum run\` offers all built-in tools and runs ${TOOL_TURNS} \`calculator\` turns and the answer against a fake LLM in another process; its baseline, \`bench/fetch-loop.mjs\`, is a hand-written fetch + SSE loop that sends Dimsum's first request body and the same ${TOOL_TURNS} turns. Search baselines: \`node -e 0\` plus the search itself, timed inside a fresh process (\`bench/search-only.mjs\`). Node 22 is the \`node@22\` npm package when installed. The CLI's V8 code cache (see \`bin/dimsum.js\`) is written by the first run of each command, here the check run and the seeding \`kb add\` before the rounds, as on a user's machine after the first run.`,
      "",
      `Each cell is wall clock / CPU time (user + system of the process, from bash's \`time\`); CPU time moves little when other work shares the machine, wall time does (load average while measuring: ${loadavg()[0].toFixed(1)} on ${cpus().length} cores).`,
      "",
      "| Node | command | time (wall / CPU) | baseline (wall / CPU) | ratio or overhead (wall / CPU) | target |",
      "|---|---|---|---|---|---|",
      ...table,
    ].join("\n");
  } finally {
    child.kill("SIGTERM");
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(await run());
}
