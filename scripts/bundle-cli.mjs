// Bundles the compiled CLI (dist/cli/main.js and everything it imports) into dist/bundle/cli/, which
// bin/dimsum.js loads: a few files instead of ~300 modules is most of a cold start on Node 20, where
// every module costs a resolution, several file-system calls and a compile. Commands and services
// that load on first use (`await import(...)`) stay lazy: they become chunks of their own.
//
// dist/bundle/cli/ is three folders deep like dist/<area>/<file>.js, so the code that finds the
// package's files relative to itself (`../../../web/dist`, `../../../tools/http/`) finds them here too.
// Left out: better-sqlite3 (a native addon) and pdfjs-dist (loads its own files), found in
// node_modules at run time. Run after `tsc -p tsconfig.build.json` (`npm run build` does both).
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outdir = join(root, "dist/bundle/cli");

// The built-ins' parameter schemas, converted once here rather than in every run (see
// src/tools/builtin/index.ts); from the same compiled dist as the bundle, so never stale.
const { builtinTools } = await import(pathToFileURL(join(root, "dist/tools/builtin/index.js")).href);
const { zodToJsonSchema } = await import(pathToFileURL(join(root, "dist/tools/json-schema.js")).href);
const parameters = Object.fromEntries(builtinTools().map((t) => [t.name, zodToJsonSchema(t.parameters)]));

/**
 * On Node 22+, `import "node:http"` builds an ES module view of node:http, which reads every export,
 * including the lazy `WebSocket` getters that load undici (~10 ms of a run that never uses it). The
 * bundle takes node:http through require instead, which reads nothing.
 */
const httpThroughRequire = {
  name: "http-through-require",
  setup(b) {
    b.onResolve({ filter: /^(node:)?http$/ }, (args) =>
      args.namespace === "http-require"
        ? { path: "node:http", external: true }
        : { path: "node:http", namespace: "http-require" },
    );
    b.onLoad({ filter: /.*/, namespace: "http-require" }, () => ({
      contents: 'module.exports = require("node:http");',
      loader: "js",
    }));
  },
};

rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: [join(root, "dist/cli/main.js")],
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external: ["better-sqlite3", "pdfjs-dist", "pg", "ioredis"],
  // A string literal (parsed at run time): an object here would add an init call to every module.
  define: { DIMSUM_BUILTIN_PARAMETERS: JSON.stringify(JSON.stringify(parameters)) },
  // Bundled CommonJS packages (commander, ws, …) call require() for Node's built-ins.
  banner: {
    js: 'import { createRequire as __dimsumRequire } from "node:module"; const require = __dimsumRequire(import.meta.url);',
  },
  plugins: [httpThroughRequire],
  logLevel: "warning",
});
