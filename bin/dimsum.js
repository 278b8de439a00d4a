#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (built by `npm install` via the prepare script).
import module from "node:module";

// Node 22+ caches compiled code between runs, which shortens every cold start; Node 20 lacks it.
module.enableCompileCache?.();

const { main } = await import("../dist/cli/main.js");
main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`dimsum: internal error: ${err?.stack ?? err}\n`);
    process.exitCode = 70;
  },
);
