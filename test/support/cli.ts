/** Runs the real CLI (`node bin/dimsum.js`) as a child process. */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { projectRoot } from "./fixtures.js";

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  input?: string;
  timeoutMs?: number;
}

/** A clean environment: no provider keys from the developer's shell, a temp DIMSUM_HOME. */
export function cleanEnv(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NO_COLOR: "1",
  };
  env.DIMSUM_HOME = mkdtempSync(join(tmpdir(), "dimsum-home-"));
  return { ...env, ...extra };
}

/** Runs `dimsum <args>` and collects its output. */
export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(projectRoot, "bin/dimsum.js"), ...args], {
      cwd: options.cwd ?? mkdtempSync(join(tmpdir(), "dimsum-cwd-")),
      env: options.env ?? cleanEnv(),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 15_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? "");
  });
}

/** Parses JSON Lines output. */
export function jsonLines(text: string): Array<{ type: string } & Record<string, unknown>> {
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l));
}
