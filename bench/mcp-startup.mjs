// Startup with three stdio MCP servers (everything, filesystem, everything again): the time from
// spawning a fresh Node process (as the CLI starts) until every server is connected and its tools are
// registered, with the servers started in parallel (what Dimsum does) versus one after another.
// Needs `npm run build`. Runs standalone (`node bench/mcp-startup.mjs`) or via `run()`.
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const EVERYTHING = join(root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const FILESYSTEM = join(root, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
const MANAGER = join(root, "dist/mcp/manager.js");
const RUNS = Number(process.env.MCP_BENCH_RUNS ?? 5);

// The child: import the manager (counted, as the CLI pays for it too), connect, report, shut down.
const CHILD = `
const servers = JSON.parse(process.env.MCP_BENCH_SERVERS);
const { McpManager } = await import(process.env.MCP_BENCH_MANAGER);
const manager = new McpManager({ servers, env: process.env });
if (process.env.MCP_BENCH_MODE === "parallel") await manager.start();
else for (const s of servers) await manager.start([s.name]);
const ms = performance.now();
const states = manager.statuses().map((s) => s.state);
const tools = manager.registry.names().length;
process.stdout.write(JSON.stringify({ ms, states, tools }) + "\\n");
await manager.close();
`;

function serverConfigs(dir) {
  const base = {
    transport: "stdio",
    command: process.execPath,
    env: {},
    enabled: true,
    include: [],
    exclude: [],
    source: "bench",
  };
  return [
    { ...base, name: "everything", args: [EVERYTHING, "stdio"] },
    { ...base, name: "files", args: [FILESYSTEM, dir] },
    { ...base, name: "everything2", args: [EVERYTHING, "stdio"] },
  ];
}

/** One fresh process; resolves to wall time from spawn to "all connected" (ms) and the child's report. */
function once(mode, servers) {
  return new Promise((done, fail) => {
    const started = performance.now();
    let readyAt = 0;
    let output = "";
    const child = spawn(process.execPath, ["--input-type=module", "-e", CHILD], {
      env: {
        ...process.env,
        MCP_BENCH_MODE: mode,
        MCP_BENCH_SERVERS: JSON.stringify(servers),
        MCP_BENCH_MANAGER: MANAGER,
      },
      stdio: ["ignore", "pipe", "inherit"],
    });
    child.stdout.on("data", (chunk) => {
      if (readyAt === 0) readyAt = performance.now();
      output += chunk;
    });
    child.on("error", fail);
    child.on("close", (code) => {
      if (code !== 0 || readyAt === 0) return fail(new Error(`bench child exited with ${code}: ${output}`));
      const report = JSON.parse(output.trim());
      if (report.states.some((s) => s !== "connected"))
        return fail(new Error(`not all connected: ${output}`));
      done({ wallMs: readyAt - started, report });
    });
  });
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Measures both modes (interleaved, so machine noise hits both alike); returns a markdown section. */
export async function run() {
  const dir = await mkdtemp(join(tmpdir(), "dimsum-mcp-bench-"));
  const servers = serverConfigs(dir);
  const samples = { parallel: [], sequential: [] };
  let tools = 0;
  try {
    await once("parallel", servers); // warm the disk cache; not counted
    for (let i = 0; i < RUNS; i++) {
      for (const mode of ["parallel", "sequential"]) {
        const { wallMs, report } = await once(mode, servers);
        samples[mode].push(wallMs);
        tools = report.tools;
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const parallel = median(samples.parallel);
  const sequential = median(samples.sequential);
  const fmt = (ms) => `${Math.round(ms)} ms`;
  return [
    "## MCP startup: three stdio servers",
    "",
    `Fresh Node process to all three connected (everything, filesystem, everything again; ${tools} tools registered),`,
    `median of ${RUNS} runs each, Node ${process.version}.`,
    "",
    "| mode | median | min | max |",
    "| --- | --- | --- | --- |",
    `| parallel (Dimsum) | ${fmt(parallel)} | ${fmt(Math.min(...samples.parallel))} | ${fmt(Math.max(...samples.parallel))} |`,
    `| sequential (baseline) | ${fmt(sequential)} | ${fmt(Math.min(...samples.sequential))} | ${fmt(Math.max(...samples.sequential))} |`,
    "",
    `Parallel takes ${(parallel / sequential).toFixed(2)}x the time of sequential.`,
    "",
  ].join("\n");
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${await run()}\n`);
}
