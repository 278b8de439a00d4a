/**
 * The built package (issue 42): `npm pack` of the built tree, installed with `--omit=dev` into an
 * empty folder by a PATH that holds node, npm and sh and nothing else (no compiler, no Python, no
 * TypeScript, no Vite), then `dimsum --version`, `dimsum run` against the fake model and `dimsum serve`
 * with its health probes and the web UI's first page.
 *
 * better-sqlite3's install script takes its prebuilt binary (prebuild-install) before it would
 * compile. GitHub, where those binaries are downloaded from, is unreachable on the CI machine, so the
 * test hands prebuild-install the same file from a local folder (its `local_prebuilds` option), made
 * from the checkout's own build of the addon; with no compiler on the PATH, a missing binary fails
 * the install. Needs `npm run build` first (`npm test` does it) and the npm registry (or npm's cache).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { freePort } from "../server/serve-process.js";
import { projectRoot } from "../support/fixtures.js";

const INSTALL_TIMEOUT_MS = 8 * 60_000;
const pkg = JSON.parse(readFileSync(join(projectRoot, "package.json"), "utf8")) as {
  version: string;
  devDependencies: Record<string, string>;
};

const BUILD_ONLY = [
  "typescript",
  "vite",
  "vitest",
  "esbuild",
  "@biomejs/biome",
  "mermaid",
  "preact",
  "@modelcontextprotocol/ext-apps",
  "@modelcontextprotocol/conformance",
];

let root: string;
let app: string;
let tools: string;
let llm: FakeLlmServer;
const children: ChildProcess[] = [];

/** Runs a command with only the bare tools on the PATH; resolves with its exit code and output. */
function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string>; timeoutMs?: number },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { HOME: process.env.HOME ?? root, PATH: tools, NO_COLOR: "1", ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 30_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A tools folder with node, npm and sh: what "a machine with Node and nothing else" has. */
function bareTools(dir: string): string {
  mkdirSync(dir);
  // npm's own script (npm-cli.js), wherever this machine's `npm` links to.
  const npmCli = realpathSync(execFileSync("sh", ["-c", "command -v npm"], { encoding: "utf8" }).trim());
  symlinkSync(process.execPath, join(dir, "node"));
  symlinkSync(npmCli, join(dir, "npm"));
  symlinkSync("/bin/sh", join(dir, "sh"));
  return dir;
}

/** better-sqlite3's prebuilt binary for this Node, as prebuild-install names and unpacks it. */
function localPrebuild(dir: string): string {
  const version = (
    JSON.parse(readFileSync(join(projectRoot, "node_modules/better-sqlite3/package.json"), "utf8")) as {
      version: string;
    }
  ).version;
  const stage = join(dir, "stage");
  mkdirSync(join(stage, "build/Release"), { recursive: true });
  execFileSync("cp", [
    join(projectRoot, "node_modules/better-sqlite3/build/Release/better_sqlite3.node"),
    join(stage, "build/Release/"),
  ]);
  const out = join(dir, "prebuilds");
  mkdirSync(out);
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  execFileSync("tar", ["-C", stage, "-czf", join(out, name), "build"]);
  return out;
}

beforeAll(async () => {
  if (
    !existsSync(join(projectRoot, "dist/bundle/cli/main.cjs")) ||
    !existsSync(join(projectRoot, "web/dist/index.html"))
  )
    throw new Error("the package needs the built tree: run `npm run build` first");
  root = mkdtempSync(join(tmpdir(), "dimsum-packed-"));
  tools = bareTools(join(root, "tools"));
  llm = await startFakeLlmServer({ defaultTurn: { text: "hello from the fake model" } });

  // The tarball of the built tree (`npm pack` would run `prepare`, the build, again).
  const packed = execFileSync("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", root], {
    cwd: projectRoot,
    encoding: "utf8",
  })
    .trim()
    .split("\n")
    .pop();
  const tarball = join(root, packed ?? "");
  expect(existsSync(tarball)).toBe(true);

  app = join(root, "app");
  mkdirSync(app);
  writeFileSync(join(app, "package.json"), "{}\n");
  const started = Date.now();
  const installed = await run("npm", ["install", "--omit=dev", "--no-audit", "--no-fund", tarball], {
    cwd: app,
    env: { npm_config_better_sqlite3_local_prebuilds: localPrebuild(root) },
    timeoutMs: INSTALL_TIMEOUT_MS,
  });
  if (installed.code !== 0) throw new Error(`npm install failed (${installed.code}):\n${installed.stderr}`);
  const lock = JSON.parse(readFileSync(join(app, "node_modules/.package-lock.json"), "utf8")) as {
    packages: Record<string, unknown>;
  };
  const megabytes = Number(
    execFileSync("du", ["-sm", join(app, "node_modules")], { encoding: "utf8" }).split("\t")[0],
  );
  // The install's measure, for BENCHMARKS.md.
  console.log(
    `packed install: ${Object.keys(lock.packages).length} packages, ${megabytes} MB, ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}, INSTALL_TIMEOUT_MS + 60_000);

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  await llm?.close();
  if (root) rmSync(root, { recursive: true, force: true });
}, 120_000);

describe("the packed install", () => {
  it("has no build tools on its PATH, and holds the built server, CLI and web UI without dev dependencies", async () => {
    for (const tool of ["cc", "gcc", "g++", "make", "python3", "tsc", "vite"]) {
      expect((await run("sh", ["-c", `command -v ${tool}`], { cwd: app })).code).not.toBe(0);
    }
    const installed = join(app, "node_modules");
    expect(existsSync(join(installed, "dimsum/dist/bundle/cli/main.cjs"))).toBe(true);
    expect(existsSync(join(installed, "dimsum/web/dist/index.html"))).toBe(true);
    expect(existsSync(join(installed, "better-sqlite3/build/Release/better_sqlite3.node"))).toBe(true);
    // What builds, lints and tests Dimsum (some devDependencies, e.g. @opentelemetry/otlp-transformer,
    // are also runtime dependencies of runtime dependencies, and rightly installed).
    for (const dev of BUILD_ONLY) {
      expect(pkg.devDependencies[dev], `${dev} is a devDependency`).toBeDefined();
      expect(existsSync(join(installed, dev)), `${dev} is installed`).toBe(false);
    }
  });

  it("answers dimsum --version", async () => {
    const result = await run(join(app, "node_modules/.bin/dimsum"), ["--version"], { cwd: app });
    expect(result.stderr).toBe("");
    expect(result.stdout.trim()).toBe(pkg.version);
    expect(result.code).toBe(0);
  });

  it("runs a prompt against the fake model", async () => {
    const result = await run(join(app, "node_modules/.bin/dimsum"), ["run", "say hello"], {
      cwd: app,
      env: {
        DIMSUM_HOME: join(root, "home-run"),
        DIMSUM_MODEL: "openai:gpt-test",
        OPENAI_API_KEY: "sk-packed-test",
        OPENAI_BASE_URL: `${llm.url}/v1`,
      },
    });
    expect(result.stdout).toContain("hello from the fake model");
    expect(result.code).toBe(0);
    expect(llm.requests.length).toBeGreaterThan(0);
  });

  it('runs the README\'s library example: import "dimsum" (the library bundle) and one run', async () => {
    const script = join(app, "library-example.mjs");
    writeFileSync(
      script,
      [
        'import { createBuiltinRegistry, loadConfig, memoryTodoStore, resolveModel, runAgent } from "dimsum";',
        "const config = loadConfig();",
        "let text = '';",
        "for await (const event of runAgent({",
        '  model: resolveModel(config, "openai:gpt-test"),',
        '  messages: [{ role: "user", content: "say hello" }],',
        "  tools: createBuiltinRegistry(),",
        "  toolEnvironment: { workspace: process.cwd(), todos: memoryTodoStore(), config: config.tools },",
        "})) if (event.type === 'text_delta') text += event.text;",
        "console.log(text);",
      ].join("\n"),
    );
    const result = await run(process.execPath, [script], {
      cwd: app,
      env: {
        DIMSUM_HOME: join(root, "home-library"),
        OPENAI_API_KEY: "sk-packed-test",
        OPENAI_BASE_URL: `${llm.url}/v1`,
      },
    });
    expect(result.stderr).toBe("");
    expect(result.stdout).toContain("hello from the fake model");
    expect(result.code).toBe(0);
  });

  it("serves its health probes and the web UI's first page", async () => {
    const port = await freePort();
    const child = spawn(join(app, "node_modules/.bin/dimsum"), ["serve", "--port", String(port)], {
      cwd: app,
      env: { HOME: root, PATH: tools, DIMSUM_HOME: join(root, "home-serve") },
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(child);
    let output = "";
    child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; !output.includes("serving on"); i++) {
      if (child.exitCode !== null || i > 300) throw new Error(`dimsum serve did not start:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: "ok" });
    expect(await (await fetch(`${url}/readyz`)).json()).toEqual({
      status: "ready",
      checks: { database: "ok" },
    });
    const page = await fetch(`${url}/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("<!doctype html>");
    const asset = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(asset).toBeDefined();
    expect((await fetch(`${url}${asset}`)).status).toBe(200);
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await exited;
  });
});
