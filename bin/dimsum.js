#!/usr/bin/env node
// Thin launcher: the CLI is compiled into dist/ and bundled into dist/bundle/cli/ by `npm run build`
// (the prepare script of `npm install`). A bundle older than the compiled modules (a `tsc` run
// alone since) is stale: then the compiled modules run.
import { statSync } from "node:fs";
import module from "node:module";

// Node 22.1+ caches compiled code between runs, which shortens every cold start; Node 20 lacks it.
module.enableCompileCache?.();

const compiled = new URL("../dist/cli/main.js", import.meta.url);
const bundled = new URL("../dist/bundle/cli/main.js", import.meta.url);
const mtime = (url) => statSync(url, { throwIfNoEntry: false })?.mtimeMs ?? -1;
const { main } = await import(mtime(bundled) >= mtime(compiled) ? bundled.href : compiled.href);
main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`dimsum: internal error: ${err?.stack ?? err}\n`);
    process.exitCode = 70;
  },
);
