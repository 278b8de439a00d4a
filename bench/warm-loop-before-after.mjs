// Warm loop before and after the capability assembly (issue 12), in one run.
// "Before" is the build of the commit that preceded the assembly (BEFORE_REF, built into
// .bench-before/<ref>/dist from `git archive`); "after" is this checkout's dist. Both run the same
// 10-iteration loop (9 tool rounds + the answer, 20 zod tools, zero-latency fake LLM in another
// process), interleaved so machine noise hits both alike. A third series takes each run's registry
// from `CapabilityAssembly.forRun` (narrowed to the same 20 tools), as every CLI and team run now does.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { z } from "zod";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const BEFORE_REF = process.env.BEFORE_REF ?? "286bb7d";
const ITERATIONS = 10;
const RUNS = 200;
const WARMUP = 20;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

/** Builds the `before` commit's runtime once (cached by ref); returns its dist folder. */
function buildBefore(ref) {
  const sha = execFileSync("git", ["-C", root, "rev-parse", "--short", ref], { encoding: "utf8" }).trim();
  const dir = join(root, ".bench-before", sha);
  const dist = join(dir, "dist");
  if (existsSync(join(dist, "agent", "run-agent.js"))) return { sha, dist };
  mkdirSync(dir, { recursive: true });
  const archive = execFileSync(
    "git",
    ["-C", root, "archive", sha, "src", "tsconfig.json", "tsconfig.build.json", "package.json"],
    { maxBuffer: 256 * 1024 * 1024 },
  );
  execFileSync("tar", ["-x", "-C", dir], { input: archive });
  if (!existsSync(join(dir, "node_modules")))
    symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));
  execFileSync(
    process.execPath,
    [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"],
    {
      cwd: dir,
      stdio: "inherit",
    },
  );
  return { sha, dist };
}

async function loadRuntime(dist) {
  const url = (p) => pathToFileURL(join(dist, p)).href;
  const [
    { runAgent },
    { streamFunctionFor },
    { defaultToolsConfig },
    { memoryTodoStore },
    { ToolRegistry },
    types,
  ] = await Promise.all([
    import(url("agent/run-agent.js")),
    import(url("llm/providers.js")),
    import(url("tools/builtin/defaults.js")),
    import(url("tools/memory-todo-store.js")),
    import(url("tools/registry.js")),
    import(url("tools/types.js")),
  ]);
  const tools = [];
  for (let i = 0; i < 20; i++) {
    tools.push(
      types.defineTool({
        name: `tool_${i}`,
        description: `Benchmark tool number ${i}: echoes its input.`,
        parameters: z.object({ value: z.number(), label: z.string(), note: z.string().optional() }),
        execute: async (args) => `tool ${i} got ${args.value} (${args.label})`,
      }),
    );
  }
  return {
    runAgent,
    stream: await streamFunctionFor("openai"),
    env: { workspace: process.cwd(), todos: memoryTodoStore(), config: defaultToolsConfig() },
    registry: new ToolRegistry(tools),
    tools,
  };
}

function startServer() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, "bench/fake-server-process.mjs")], {
      env: { ...process.env, TOOL_ROUNDS: String(ITERATIONS - 1) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    child.stdout.once("data", (d) => resolve({ url: String(d).trim(), child }));
    child.once("error", reject);
  });
}

export async function run() {
  const before = buildBefore(BEFORE_REF);
  const old = await loadRuntime(before.dist);
  const now = await loadRuntime(join(root, "dist"));
  const { CapabilityAssembly } = await import(pathToFileURL(join(root, "dist/capabilities/index.js")).href);
  const { loadConfig } = await import(pathToFileURL(join(root, "dist/config/load-config.js")).href);
  const config = loadConfig({ cwd: root, env: { DIMSUM_HOME: join(root, ".bench-home") } });
  const assembly = new CapabilityAssembly({ config });
  const { url, child } = await startServer();
  try {
    const model = {
      provider: "openai",
      id: "gpt-bench",
      protocol: "openai",
      baseUrl: `${url}/v1`,
      apiKey: "k",
      contextWindow: 128000,
    };
    const once = async (rt, registryFor) => {
      const t0 = performance.now();
      let done;
      for await (const e of rt.runAgent({
        model,
        messages: [{ role: "user", content: "Run the tools, then summarise." }],
        tools: await registryFor(),
        toolEnvironment: rt.env,
        stream: rt.stream,
        maxIterations: ITERATIONS,
      })) {
        if (e.type === "done") done = e;
        if (e.type === "error") throw new Error(e.message);
      }
      if (done.iterations !== ITERATIONS)
        throw new Error(`expected ${ITERATIONS} iterations, got ${done.iterations}`);
      return performance.now() - t0;
    };
    const only = now.tools.map((t) => t.name);
    const series = {
      before: () => once(old, async () => old.registry),
      after: () => once(now, async () => now.registry),
      assembled: () =>
        once(now, async () => (await assembly.forRun({ runTools: now.tools, only, memory: false })).tools),
    };
    for (let i = 0; i < WARMUP; i++) for (const f of Object.values(series)) await f();
    const times = { before: [], after: [], assembled: [] };
    for (let i = 0; i < RUNS; i++) for (const [k, f] of Object.entries(series)) times[k].push(await f());
    const m = Object.fromEntries(Object.entries(times).map(([k, xs]) => [k, median(xs)]));
    const perIter = (ms) => (ms / ITERATIONS).toFixed(3);
    return [
      "## Warm loop before and after the capability assembly (issue 12)",
      "",
      `The agent-loop run above (${ITERATIONS} iterations, 20 zod tools, zero-latency fake LLM in another process), three series interleaved in one process, median of ${RUNS} after ${WARMUP} warm-ups each. Before: the runtime built from commit \`${before.sha}\` (the last one before \`src/capabilities\`); after: this build; assembled: this build with each run's registry from \`CapabilityAssembly.forRun\` (narrowed to the same 20 tools, so the requests are identical), as every CLI and team run now gets it. Command: \`npm run bench -- warm-loop-before-after\`.`,
      "",
      "| series | warm run (median) | per iteration | ratio to before |",
      "|---|---|---|---|",
      `| before (\`${before.sha}\`, baseline) | ${m.before.toFixed(2)} ms | ${perIter(m.before)} ms | 1.00× |`,
      `| after (this build) | ${m.after.toFixed(2)} ms | ${perIter(m.after)} ms | ${(m.after / m.before).toFixed(2)}× |`,
      `| after, registry from \`forRun\` each run | ${m.assembled.toFixed(2)} ms | ${perIter(m.assembled)} ms | ${(m.assembled / m.before).toFixed(2)}× |`,
    ].join("\n");
  } finally {
    child.kill("SIGTERM");
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(await run());
}
