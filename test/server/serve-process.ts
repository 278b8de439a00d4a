/** A real `dimsum serve` process on a free port of 127.0.0.1, for tests of restarts and crashes. */
import { type ChildProcess, spawn } from "node:child_process";
import { type AddressInfo, createServer as createNetServer } from "node:net";
import { resolve } from "node:path";
import { projectRoot } from "../support/fixtures.js";
import { waitFor } from "./helpers.js";

const CLI = resolve(projectRoot, "bin/dimsum.js");

export interface ServeProcess {
  url: string;
  child: ChildProcess;
  /** What it printed so far (stdout and stderr). */
  output(): string;
  /** Stops it (SIGTERM by default; SIGKILL for a crash) and waits for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export async function freePort(): Promise<number> {
  const probe = createNetServer();
  await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
  const { port } = probe.address() as AddressInfo;
  await new Promise((r) => probe.close(r));
  return port;
}

/** Starts `dimsum serve` over `home` with `env` added to this process's environment. */
export async function startServe(home: string, env: Record<string, string>): Promise<ServeProcess> {
  let output = "";
  const child = spawn(process.execPath, [CLI, "serve", "--port", String(await freePort())], {
    cwd: home,
    env: { ...process.env, DIMSUM_HOME: home, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
  const url = await waitFor(() => {
    if (child.exitCode !== null) throw new Error(`dimsum serve exited: ${output}`);
    return /serving on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
  });
  return {
    url,
    child,
    output: () => output,
    async stop(signal = "SIGTERM") {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill(signal);
      await exited;
    },
  };
}
