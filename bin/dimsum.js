#!/usr/bin/env node
// Thin launcher: the CLI is compiled into dist/ and bundled into dist/bundle/cli/ by `npm run build`
// (the prepare script of `npm install`); without the bundle it runs the compiled modules.
import { existsSync } from "node:fs";
import module from "node:module";

// Node 22.1+ caches compiled code between runs, which shortens every cold start; Node 20 lacks it.
module.enableCompileCache?.();

const bundled = new URL("../dist/bundle/cli/main.js", import.meta.url);
const { main } = await import(existsSync(bundled) ? bundled.href : "../dist/cli/main.js");
main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`dimsum: internal error: ${err?.stack ?? err}\n`);
    process.exitCode = 70;
  },
);
