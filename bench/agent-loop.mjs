// Agent loop overhead: a 10-iteration run (9 tool rounds + the answer) with 20 registered tools
// against a zero-latency fake LLM server in another process.
//   runtime ms/iteration = (agent run time - the same HTTP exchanges replayed raw) / iterations
//   ratio                = agent run time / raw replay time (the fake server's own time + transport)
import { spawn, spawnSync } from "node:child_process";
import { request } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { z } from "zod";
import { runAgent } from "../dist/agent/run-agent.js";
import { openaiAdapter } from "../dist/llm/openai/index.js";
import { streamFunctionFor } from "../dist/llm/providers.js";
import { defaultToolsConfig } from "../dist/tools/builtin/defaults.js";
import { memoryTodoStore } from "../dist/tools/memory-todo-store.js";
import { ToolRegistry } from "../dist/tools/registry.js";
import { defineTool } from "../dist/tools/types.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const ITERATIONS = 10;
const RUNS = 60;
const WARMUP = 10;

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

function tools() {
  const list = [];
  for (let i = 0; i < 20; i++) {
    list.push(
      defineTool({
        name: `tool_${i}`,
        description: `Benchmark tool number ${i}: echoes its input.`,
        parameters: z.object({ value: z.number(), label: z.string(), note: z.string().optional() }),
        execute: async (args) => `tool ${i} got ${args.value} (${args.label})`,
      }),
    );
  }
  return new ToolRegistry(list);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

/** POSTs a body and reads the whole SSE response without parsing: the server's own time + transport. */
const agent = new (await import("node:http")).Agent({ keepAlive: true });
function rawExchange(url, body) {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: "POST", agent, headers: { "content-type": "application/json" } },
      (res) => {
        res.on("data", () => {});
        res.on("end", resolve);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

export async function run() {
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
    const registry = tools();
    const stream = await streamFunctionFor("openai");
    // Record each call's request so the baseline replays exactly the same exchanges.
    let recorded = [];
    const recordingStream = (m, context, options) => {
      recorded.push(JSON.stringify(openaiAdapter.buildRequest(m, context, options ?? {}).body));
      return stream(m, context, options);
    };
    const env = { workspace: process.cwd(), todos: memoryTodoStore(), config: defaultToolsConfig() };
    const once = async (record) => {
      const t0 = performance.now();
      let done;
      for await (const e of runAgent({
        model,
        messages: [{ role: "user", content: "Run the tools, then summarise." }],
        tools: registry,
        toolEnvironment: env,
        stream: record ? recordingStream : stream,
        maxIterations: ITERATIONS,
      })) {
        if (e.type === "done") done = e;
        if (e.type === "error") throw new Error(e.message);
      }
      if (done.iterations !== ITERATIONS)
        throw new Error(`expected ${ITERATIONS} iterations, got ${done.iterations}`);
      return performance.now() - t0;
    };
    await once(true);
    const bodies = recorded;
    recorded = [];
    const endpoint = `${url}/v1/chat/completions`;
    const replay = async () => {
      const t0 = performance.now();
      for (const body of bodies) await rawExchange(endpoint, body);
      return performance.now() - t0;
    };
    for (let i = 0; i < WARMUP; i++) {
      await once(false);
      await replay();
    }
    const runTimes = [];
    const replayTimes = [];
    for (let i = 0; i < RUNS; i++) {
      // Interleave so machine noise hits both alike.
      replayTimes.push(await replay());
      runTimes.push(await once(false));
    }
    const runMs = median(runTimes);
    const replayMs = median(replayTimes);
    const perIteration = (runMs - replayMs) / ITERATIONS;
    const cold = coldStart(url);
    return [
      "## Agent loop overhead (issue 2)",
      "",
      `A ${ITERATIONS}-iteration run (${ITERATIONS - 1} tool rounds + the answer), 20 registered zod tools, OpenAI protocol, fake LLM server with zero latency in a separate process. Median of ${RUNS} warm runs after ${WARMUP} warm-up runs. Baseline: the same ${ITERATIONS} HTTP exchanges (identical request bodies) replayed with a raw \`node:http\` client that reads each SSE body without parsing it — the fake server's own time plus transport, measured in the same run.`,
      "",
      "| measure | value |",
      "|---|---|",
      `| agent run, warm (median) | ${runMs.toFixed(2)} ms |`,
      `| raw replay of the same exchanges (baseline) | ${replayMs.toFixed(2)} ms |`,
      `| **runtime overhead per iteration** (run − baseline) / ${ITERATIONS} | **${perIteration.toFixed(3)} ms** (target < 2 ms) |`,
      `| ratio run / baseline | ${(runMs / replayMs).toFixed(2)}× |`,
      `| cold process: \`dimsum run --json\` (import + ${ITERATIONS}-iteration run + exit), median of 5 | ${cold.dimsum.toFixed(0)} ms |`,
      `| cold process baseline: \`node -e 0\`, median of 5 | ${cold.node.toFixed(0)} ms |`,
      `| cold ratio dimsum / node | ${(cold.dimsum / cold.node).toFixed(2)}× |`,
    ].join("\n");
  } finally {
    child.kill("SIGTERM");
  }
}

function coldStart(url) {
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    OPENAI_API_KEY: "k",
    OPENAI_BASE_URL: `${url}/v1`,
    DIMSUM_MODEL: "openai:gpt-bench",
    DIMSUM_HOME: join(root, ".bench-home"),
  };
  const time = (args) => {
    const xs = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      const r = spawnSync(process.execPath, args, { env, cwd: root, stdio: ["ignore", "pipe", "pipe"] });
      if (r.status !== 0) throw new Error(`cold run failed: ${r.stderr}`);
      xs.push(performance.now() - t0);
    }
    return median(xs);
  };
  return {
    node: time(["-e", "0"]),
    dimsum: time([
      join(root, "bin/dimsum.js"),
      "run",
      "--json",
      "--tools",
      "calculator",
      "--max-iterations",
      "20",
      "go",
    ]),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(await run());
}
