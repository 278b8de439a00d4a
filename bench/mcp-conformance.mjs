// Runs the official MCP conformance suite (@modelcontextprotocol/conformance) against Dimsum:
// the client scenarios against our McpManager (dist/mcp/conformance-client.js), and the server
// scenarios against our Streamable HTTP endpoint (createMcpHttpHandler). Needs `npm run build`.
// No network: every scenario runs against servers the suite starts on localhost.
//   node bench/mcp-conformance.mjs            # all scenarios, markdown on stdout
//   node bench/mcp-conformance.mjs initialize # only the named scenarios
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const CLI = join(root, "node_modules/@modelcontextprotocol/conformance/dist/index.js");
const SHIM = join(root, "test/mcp/fixtures/conformance-shim/register.mjs");
const CLIENT = join(root, "dist/mcp/conformance-client.js");
const SCENARIO_TIMEOUT_MS = 60_000;

/** Runs the conformance CLI with `args` in `cwd`; resolves to its exit code and output. */
export function runConformance(args, cwd) {
  return new Promise((done) => {
    const child = spawn(process.execPath, ["--import", SHIM, CLI, ...args], {
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), SCENARIO_TIMEOUT_MS);
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code: code ?? 1, output });
    });
  });
}

/** The scenario names the installed suite knows, by side, and the revisions each belongs to. */
export async function listScenarios() {
  const { output } = await runConformance(["list"], root);
  const client = [];
  const server = [];
  const revisions = new Map();
  let side;
  for (const line of output.split("\n")) {
    // Headings: "Server scenarios", "Client scenarios", and others (authorization servers) we skip.
    if (/^\S/.test(line)) {
      side = line.startsWith("Server scenarios")
        ? server
        : line.startsWith("Client scenarios")
          ? client
          : undefined;
    }
    const match = /^\s+- (\S+)(?:\s+\[([^\]]*)\])?/.exec(line);
    if (match && side) {
      side.push(match[1]);
      if (match[2]) revisions.set(match[1], match[2].split(",").join(", "));
    }
  }
  return { client, server, revisions };
}

/** "Passed: 3/4, 1 failed, 0 warnings" and the overall verdict from one scenario's output. */
export function summarise(scenario, side, { code, output }) {
  const counts = /Passed: (\d+)\/(\d+), (\d+) failed, (\d+) warnings/.exec(output);
  const failedChecks = [...output.matchAll(/\[([\w-]+)\s*\]\s+\S*FAILURE/g)].map((m) => m[1]);
  const failed = counts ? Number(counts[3]) : 1;
  const warnings = counts ? Number(counts[4]) : 0;
  // Client runs print an OVERALL verdict; server runs only the counts (and exit 0 either way).
  const verdict = /OVERALL: (PASSED|FAILED)/.exec(output)?.[1];
  const passed =
    code === 0 && failed === 0 && verdict !== "FAILED" && (counts !== null || verdict === "PASSED");
  return {
    scenario,
    side,
    passed,
    warnings,
    checks: counts ? `${counts[1]}/${counts[2]}` : "-",
    failedChecks: [...new Set(failedChecks)],
  };
}

/** Starts Dimsum's MCP endpoint (built-in tools) on 127.0.0.1; returns its URL and a stop function. */
export async function startDimsumServer() {
  const { createMcpHttpHandler } = await import(join(root, "dist/mcp/server.js"));
  const { defaultToolsConfig } = await import(join(root, "dist/tools/builtin/defaults.js"));
  const { memoryTodoStore } = await import(join(root, "dist/tools/memory-todo-store.js"));
  const workspace = await mkdtemp(join(tmpdir(), "dimsum-conformance-"));
  const handler = createMcpHttpHandler({
    toolContext: { workspace, runId: "conformance", todos: memoryTodoStore(), config: defaultToolsConfig() },
  });
  const server = createServer((req, res) => {
    if (!req.url?.startsWith("/mcp")) {
      res.writeHead(404).end();
      return;
    }
    handler(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address();
  return {
    url: `http://localhost:${port}/mcp`,
    async stop() {
      await handler.close();
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
      await rm(workspace, { recursive: true, force: true });
    },
  };
}

/** Runs the chosen (default: all) scenarios; returns one summary per scenario. */
export async function runAll(only = []) {
  const scenarios = await listScenarios();
  const pick = (names) => (only.length > 0 ? names.filter((n) => only.includes(n)) : names);
  const cwd = await mkdtemp(join(tmpdir(), "dimsum-conformance-results-"));
  const results = [];
  try {
    for (const scenario of pick(scenarios.client)) {
      const run = await runConformance(
        ["client", "--command", `${process.execPath} ${CLIENT}`, "--scenario", scenario],
        cwd,
      );
      results.push({
        ...summarise(scenario, "client", run),
        revisions: scenarios.revisions.get(scenario) ?? "",
      });
    }
    const serverScenarios = pick(scenarios.server);
    if (serverScenarios.length > 0) {
      const dimsum = await startDimsumServer();
      try {
        for (const scenario of serverScenarios) {
          const run = await runConformance(["server", "--url", dimsum.url, "--scenario", scenario], cwd);
          results.push({
            ...summarise(scenario, "server", run),
            revisions: scenarios.revisions.get(scenario) ?? "",
          });
        }
      } finally {
        await dimsum.stop();
      }
    }
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
  return results;
}

/** The markdown section for BENCHMARKS.md / README. */
export async function run(only = []) {
  const results = await runAll(only);
  const lines = ["## MCP conformance (@modelcontextprotocol/conformance)", ""];
  for (const side of ["client", "server"]) {
    const rows = results.filter((r) => r.side === side);
    if (rows.length === 0) continue;
    const passed = rows.filter((r) => r.passed).length;
    lines.push(
      `### ${side === "client" ? "Client (McpManager)" : "Server (dimsum HTTP endpoint)"}: ${passed}/${rows.length} scenarios pass`,
      "",
    );
    lines.push(
      "| scenario | revisions | result | checks | failing checks |",
      "| --- | --- | --- | --- | --- |",
    );
    for (const r of rows) {
      const result = r.passed ? (r.warnings > 0 ? `pass (${r.warnings} warnings)` : "pass") : "fail";
      lines.push(
        `| ${r.scenario} | ${r.revisions} | ${result} | ${r.checks} | ${r.failedChecks.join(", ")} |`,
      );
    }
    lines.push("");
  }
  return lines.join("\n");
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${await run(process.argv.slice(2))}\n`);
}
