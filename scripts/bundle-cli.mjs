// Bundles the compiled CLI (dist/cli/main.js and everything it imports) into one CommonJS file,
// dist/bundle/cli/main.cjs, which bin/dimsum.js runs through V8's code cache: one file read and no
// parsing, instead of resolving, reading and compiling ~300 modules (or two dozen chunks). Most of a
// cold start on Node 20 was that, and Node 20 has no compile cache of its own. Commands and services
// that load on first use (`await import(...)`) stay lazy: esbuild wraps each module in a function
// that runs when first imported, and V8 compiles a function only when it is first called.
//
// dist/bundle/cli/ is three folders deep like dist/<area>/<file>.js, so the code that finds the
// package's files relative to itself (`../../../web/dist`, `../../../tools/http/`) finds them here too.
// Left out: better-sqlite3 (a native addon) and pdfjs-dist (loads its own files), found in
// node_modules at run time. Run after `tsc -p tsconfig.build.json` (`npm run build` does both).
import { readFileSync, rmSync, writeFileSync } from "node:fs";
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
 * bin/dimsum.js runs the bundle as a function of (exports, require, module, __filename, __dirname,
 * __dimsumImport), like a CommonJS module plus an `import()` of its own: on Node 20, `import()` fails
 * in code that V8 loaded from its code cache, so the bundle's imports of plugins and pdfjs
 * (src/import-external.ts) go to the launcher, an ES module.
 */
const importThroughLauncher = {
  name: "import-through-launcher",
  setup(b) {
    b.onLoad({ filter: /[\\/]dist[\\/]import-external\.js$/ }, () => ({
      contents: "export const importExternal = (specifier) => __dimsumImport(specifier);",
      loader: "js",
    }));
  },
};

// Server-only drivers, required where installed when a database or Redis is configured; the chat
// platforms' SDKs (loaded only when such a connector runs, through importExternal), the
// OpenTelemetry SDK (only with an OTLP endpoint) and the A2A SDK and Kysely (only with A2A calls) likewise
// stay out of the bundle every command reads.
const external = [
  "better-sqlite3",
  "pdfjs-dist",
  "pg",
  "ioredis",
  "@larksuiteoapi/node-sdk",
  "dingtalk-stream",
  "@wecom/crypto",
  "@opentelemetry/*",
  "@a2a-js/sdk",
  "@a2a-js/sdk/*",
  // The query builder of the A2A server's task store, loaded by the first A2A call.
  "kysely",
  // The browser tool's driver, loaded on its first use.
  "playwright-core",
];

const outfile = join(outdir, "main.cjs");
rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: [join(root, "dist/cli/main.js")],
  outfile,
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  external,
  define: {
    // A string literal (parsed at run time): an object here would add an init call to every module.
    DIMSUM_BUILTIN_PARAMETERS: JSON.stringify(JSON.stringify(parameters)),
    // The modules find the package's files from their own URL; in CommonJS that is the bundle's.
    "import.meta.url": "__dimsumBundleUrl",
  },
  // ES modules are strict code, and so is every module of the bundle, as it was in the ESM bundle.
  banner: {
    js: '"use strict";\nconst __dimsumBundleUrl = require("node:url").pathToFileURL(__filename).href;',
  },
  plugins: [importThroughLauncher],
  logLevel: "warning",
});

// ASCII only, so that bin/dimsum.js can read the bundle as latin1, a plain copy, where decoding 3 MB
// of UTF-8 takes ~15 ms. esbuild escapes strings and identifiers but not comments and regular
// expressions; `\uXXXX` means the same character there (a surrogate pair escaped unit by unit, too),
// except right after a backslash.
const text = readFileSync(outfile, "utf8");
const ascii = text.replace(/\\?[\u0080-\uffff]/g, (c) => {
  if (c.length > 1) throw new Error(`bundle-cli: cannot escape an escaped non-ASCII character: ${c}`);
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
});
writeFileSync(outfile, ascii);

// The library (`import "dimsum"`, package.json's export "."): the same modules as one ES module,
// dist/bundle/lib/index.js, with what loads on first use (`await import(...)`: the other providers,
// html-to-text, the stores' drivers) in chunks beside it (same depth, for the same reason). Importing ~250 compiled modules (zod alone is
// ~95 files) was most of the library's cold start; one file is read and compiled instead. Three folders
// deep, like the CLI bundle, so the package's own files are found relative to it. The compiled modules
// stay in dist/ for the type declarations and `dimsum/testing`.
const libdir = join(root, "dist/bundle/lib");
rmSync(libdir, { recursive: true, force: true });
await build({
  entryPoints: [join(root, "dist/index.js")],
  outdir: libdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external,
  define: { DIMSUM_BUILTIN_PARAMETERS: JSON.stringify(JSON.stringify(parameters)) },
  // CommonJS dependencies bundled into an ES module call `require` for Node's own modules.
  banner: {
    js: 'import { createRequire as __dimsumCreateRequire } from "node:module";\nconst require = __dimsumCreateRequire(import.meta.url);',
  },
  logLevel: "warning",
});
