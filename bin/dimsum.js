#!/usr/bin/env node
// Thin launcher: the CLI is compiled into dist/ and bundled into dist/bundle/cli/main.cjs by
// `npm run build` (the prepare script of `npm install`). A bundle older than the compiled modules (a
// `tsc` run alone since) is stale: then the compiled modules run.
//
// The bundle runs through V8's code cache: the first run of each command saves the code V8 compiled
// for it, later runs of that command load it instead of parsing and compiling again (most of a cold
// start; Node 20 has no compile cache of its own). The cache is per user, per Node version and per
// bundle build; a cache V8 rejects is rewritten, and one that cannot be read or written is skipped.
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import module from "node:module";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import vm from "node:vm";

// Node 22.1+ caches the compiled code of the modules outside the bundle (better-sqlite3, yaml, …).
module.enableCompileCache?.();

const compiledUrl = new URL("../dist/cli/main.js", import.meta.url);
const compiled = fileURLToPath(compiledUrl);
const bundled = fileURLToPath(new URL("../dist/bundle/cli/main.cjs", import.meta.url));
const statOf = (path) => statSync(path, { throwIfNoEntry: false });
const bundle = statOf(bundled);
const { main } =
  bundle && bundle.mtimeMs >= (statOf(compiled)?.mtimeMs ?? -1)
    ? runBundle(bundle)
    : await import(compiledUrl.href);
main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`dimsum: internal error: ${err?.stack ?? err}\n`);
    process.exitCode = 70;
  },
);

/** Runs the CommonJS bundle, with the cached code of this command when there is one; returns its exports. */
function runBundle(stat) {
  const cacheFile = codeCacheFile(stat);
  const cachedData = cacheFile ? readOrUndefined(cacheFile) : undefined;
  // The bundle is ASCII (scripts/bundle-cli.mjs makes sure): latin1 reads it without decoding UTF-8.
  const source = readFileSync(bundled, "latin1");
  const wrapped = `(function (exports, require, module, __filename, __dirname, __dimsumImport) {${source}\n})`;
  const script = new vm.Script(wrapped, { filename: bundled, cachedData });
  const cjs = { exports: {} };
  const require = module.createRequire(bundled);
  // The bundle's import() of plugins and pdfjs comes here (see scripts/bundle-cli.mjs).
  const importExternal = (specifier) => import(specifier);
  script.runInThisContext()(cjs.exports, require, cjs, bundled, dirname(bundled), importExternal);
  if (cacheFile && (!cachedData || script.cachedDataRejected)) {
    // Saved as the process exits, so the code of the whole command is in it; not after a failure,
    // which ran only part of it.
    process.once("exit", (code) => code === 0 && saveCodeCache(cacheFile, script));
  }
  return cjs.exports;
}

/**
 * Where the code cache of this command lives: a folder of this user's under the temp dir, one file
 * per command (`run`, `memory`, …; options alone share one), Node version, bundle and build of it.
 */
function codeCacheFile(stat) {
  try {
    const uid = process.getuid?.() ?? "user";
    const dir = join(tmpdir(), `dimsum-code-cache-${uid}`);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // Only a folder of our own that nobody else may write: a cache is code V8 runs.
    const owned = statSync(dir);
    if (process.getuid && (owned.uid !== uid || (owned.mode & 0o022) !== 0)) return undefined;
    const command = /^[a-z][a-z-]*$/.test(process.argv[2] ?? "") ? process.argv[2] : "default";
    // Installs of their own (a global one, a project's) keep caches of their own.
    const install = `${command}-${fnv1a(bundled)}-${process.version}-${process.arch}`;
    return join(dir, `${install}-${stat.size}-${Math.round(stat.mtimeMs)}.bin`);
  } catch {
    return undefined;
  }
}

/** A 32-bit FNV-1a hash of a string, in hex. */
function fnv1a(text) {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(16).padStart(8, "0");
}

function readOrUndefined(file) {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

/**
 * Writes the cache through a temporary file and a rename, so a concurrent run reads all or nothing,
 * and removes the caches of earlier builds of this bundle for this command.
 */
function saveCodeCache(file, script) {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, script.createCachedData());
    renameSync(temporary, file);
    const dir = dirname(file);
    const install = basename(file).replace(/[^-]+-[^-]+\.bin$/, "");
    for (const name of readdirSync(dir)) {
      if (name.startsWith(install) && name.endsWith(".bin") && name !== basename(file)) {
        unlinkSync(join(dir, name));
      }
    }
  } catch {
    // A read-only or full temp dir: the next run compiles again.
  }
}
