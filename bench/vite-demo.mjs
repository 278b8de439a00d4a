// The seed's demo against the real npm registry: the steps the agent takes for "Create a Vite +
// TypeScript app that shows a counter, install it, start it, and show me a screenshot", run through
// the same tools (sandboxed, network allowed to registry.npmjs.org only) without a model, timed:
//   scaffold (npm create vite) → install (npm install) → start (npm run dev as a session process)
//   → port listening → browser open → click the counter → screenshot.
// Needs bubblewrap, /usr/bin/chromium and a compiled dist/ (npm run build, or tsc -p tsconfig.build.json).
//   node bench/vite-demo.mjs            (VITE_DEMO_ALLOW_PRIVATE=1: see below)
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BrowserSessions } from "../dist/tools/browser/browser-sessions.js";
import { browserTool } from "../dist/tools/browser/browser-tool.js";
import { defaultToolsConfig } from "../dist/tools/builtin/defaults.js";
import { executeCommandTool } from "../dist/tools/builtin/shell.js";
import { memoryTodoStore } from "../dist/tools/memory-todo-store.js";
import { ProcessManager } from "../dist/tools/process/process-manager.js";
import { processReadTool, processStartTool } from "../dist/tools/process/process-tools.js";
import { DEFAULT_PROCESS_SETTINGS } from "../dist/tools/process/types.js";

const PORT = 5173;
const KEY = "bench:vite-demo";
const workspace = await mkdtemp(join(tmpdir(), "dimsum-vite-demo-"));
const processes = new ProcessManager({ settings: DEFAULT_PROCESS_SETTINGS });
const browsers = new BrowserSessions({ processes });
const config = defaultToolsConfig();
config.shell = {
  ...config.shell,
  allow: [],
  timeoutMs: 300_000,
  sandbox: { ...config.shell.sandbox, networkPolicy: { mode: "allow", hosts: ["registry.npmjs.org"] } },
};
// Where the machine's DNS answers registry.npmjs.org with a non-public address (a mirror, a test
// network), the allow-list proxy refuses it (403) unless private addresses are allowed, as
// tools.fetch.allowPrivateNetwork does: VITE_DEMO_ALLOW_PRIVATE=1.
if (process.env.VITE_DEMO_ALLOW_PRIVATE === "1")
  config.fetch = { ...config.fetch, allowPrivateNetwork: true };
const ctx = {
  signal: new AbortController().signal,
  workspace,
  runId: "bench",
  todos: memoryTodoStore(),
  config,
  processes: { manager: processes, key: KEY },
  browser: { sessions: browsers, key: KEY },
};

const text = (r) =>
  typeof r.content === "string"
    ? r.content
    : r.content.map((p) => (p.type === "text" ? p.text : "[image]")).join("");
async function step(label, tool, args) {
  const t = performance.now();
  const raw = await tool.execute(tool.parameters.parse(args), ctx);
  const result = typeof raw === "string" ? { content: raw } : raw;
  const ms = Math.round(performance.now() - t);
  console.log(
    `${label.padEnd(10)} ${String(ms).padStart(6)} ms  ${text(result).split("\n").slice(-1)[0].slice(0, 100)}`,
  );
  if (result.isError) throw new Error(`${label} failed: ${text(result)}`);
  return { result, ms };
}

const started = performance.now();
try {
  await step("scaffold", executeCommandTool, {
    command: "npm create -y vite@latest counter -- --template vanilla-ts --no-interactive </dev/null",
  });
  await step("install", executeCommandTool, { command: "cd counter && npm install --no-audit --no-fund" });
  await step("start", processStartTool, {
    name: "dev",
    command: `npm run dev -- --host 127.0.0.1 --port ${PORT} --strictPort`,
    workingDirectory: "counter",
  });
  await step("port", processReadTool, { name: "dev", waitForPort: PORT });
  await step("open", browserTool, { action: "open", url: `http://localhost:${PORT}/` });
  await step("click", browserTool, { action: "click", selector: "#counter" });
  const { result } = await step("screenshot", browserTool, { action: "screenshot" });
  const image = result.content.find((p) => p.type === "image");
  const total = Math.round(performance.now() - started);
  console.log(
    `time to screenshot: ${total} ms (screenshot ${Buffer.from(image.data, "base64").length} bytes)`,
  );
} finally {
  await browsers.closeAll();
  await processes.closeAll();
  await rm(workspace, { recursive: true, force: true });
}
