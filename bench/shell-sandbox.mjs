// The cost of the shell sandbox: `execute_command` running `true` (and a small pipeline) through the
// real tool, in bubblewrap with its cgroup, against the same tool without a sandbox (bwrap path
// missing, allowUnsandboxed), interleaved in one process. Needs `npm run build` (reads dist/).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultToolsConfig } from "../dist/tools/builtin/defaults.js";
import { executeCommandTool } from "../dist/tools/builtin/shell.js";

const RUNS = 40;
const WARMUP = 5;

function context(workspace, sandboxed) {
  const config = defaultToolsConfig();
  if (!sandboxed) {
    config.shell.sandbox.bwrapPath = join(workspace, "no-bwrap");
    config.shell.sandbox.allowUnsandboxed = true;
  }
  return {
    signal: new AbortController().signal,
    workspace,
    runId: "bench",
    todos: { list: () => [], save: () => undefined },
    config,
  };
}

async function time(ctx, command) {
  const args = executeCommandTool.parameters.parse({ command });
  const started = performance.now();
  const result = await executeCommandTool.execute(args, ctx);
  const elapsed = performance.now() - started;
  if (result.isError) throw new Error(`${command}: ${result.content}`);
  return elapsed;
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

export async function run() {
  const workspace = mkdtempSync(join(tmpdir(), "dimsum-bench-shell-"));
  try {
    const series = { plain: context(workspace, false), sandboxed: context(workspace, true) };
    const rows = [];
    for (const command of ["true", "printf 'b\\na\\n' | sort | head -1 > out.txt && cat out.txt"]) {
      const times = { plain: [], sandboxed: [] };
      for (let i = 0; i < WARMUP + RUNS; i++) {
        for (const name of ["plain", "sandboxed"]) {
          const ms = await time(series[name], command);
          if (i >= WARMUP) times[name].push(ms);
        }
      }
      const plain = median(times.plain);
      const sandboxed = median(times.sandboxed);
      rows.push(
        `| \`${command.replace(/\|/g, "\\|")}\` | ${plain.toFixed(2)} ms | ${sandboxed.toFixed(2)} ms | ${(sandboxed / plain).toFixed(2)}× | ${(sandboxed - plain).toFixed(2)} ms |`,
      );
    }
    return [
      "## Shell sandbox cost (issue 13)",
      "",
      `One \`execute_command\` call through the real tool, median of ${RUNS} after ${WARMUP} warm-ups, the two series interleaved in one process. Baseline: the same tool without a sandbox (bwrap missing, \`allowUnsandboxed\`). Sandboxed: bubblewrap with its namespaces, mounts and a per-command cgroup. Command: \`npm run bench -- shell-sandbox\`.`,
      "",
      "| command | without sandbox (baseline) | sandboxed | ratio | added per command |",
      "|---|---|---|---|---|",
      ...rows,
    ].join("\n");
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}
