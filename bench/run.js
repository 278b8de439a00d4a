// `npm run bench`: runs every benchmark in this folder and writes BENCHMARKS.md.
// Each bench module exports `run()` returning a Markdown section; pass names to run a subset
// (e.g. `npm run bench -- agent-loop`), which prints without rewriting the file.
import { writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const all = [
  "agent-loop",
  "warm-loop-before-after",
  "cold-start",
  "library-cold-start",
  "session-context",
  "memory-search",
  "memory-quality",
  "cjk-memory-quality",
  "kb-quality",
  "kb-backends",
  "kb-speed",
  "mcp-startup",
  "mcp-conformance",
  "ws-load",
  "real-use",
  "shell-sandbox",
  "approvals",
  "prompt-cache",
  "install",
];
const only = process.argv.slice(2);
const names = only.length > 0 ? only : all;

const sections = [];
for (const name of names) {
  const file = join(here, `${name}.mjs`);
  process.stderr.write(`bench: ${name}…\n`);
  const started = performance.now();
  try {
    const mod = await import(pathToFileURL(file).href);
    sections.push(await mod.run());
  } catch (err) {
    if (err?.code === "ERR_MODULE_NOT_FOUND" && String(err.message).includes(`${name}.mjs`)) continue;
    sections.push(`## ${name}\n\nFailed: ${err?.stack ?? err}`);
  }
  process.stderr.write(`bench: ${name} took ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
}

const header = [
  "# Benchmarks",
  "",
  "Produced by `npm run bench` (builds, then runs `node bench/run.js`). Every figure is measured in the same run as its baseline; ratios are what to compare across machines.",
  "",
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}.`,
  "",
].join("\n");
const text = `${header}\n${sections.join("\n\n")}\n`;
if (only.length > 0) process.stdout.write(text);
else writeFileSync(join(here, "..", "BENCHMARKS.md"), text);
