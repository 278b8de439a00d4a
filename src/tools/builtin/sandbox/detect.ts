/**
 * Probes once per bwrap path whether bubblewrap can build the sandbox here (binary present, user,
 * PID and network namespaces allowed). The answer is cached for the life of the process.
 */
import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { probeArgs } from "./bwrap-args.js";
import { CONTAINER_SANDBOX_HINT, inContainer } from "./container.js";
import type { SandboxStatus } from "./types.js";

const PROBE_TIMEOUT_MS = 10_000;
const probes = new Map<string, Promise<SandboxStatus>>();

/** Whether commands can run in a bubblewrap sandbox with `bwrapPath` (cached per path). */
export function detectSandbox(bwrapPath: string): Promise<SandboxStatus> {
  let probe = probes.get(bwrapPath);
  if (!probe) {
    probe = runProbe(bwrapPath);
    probes.set(bwrapPath, probe);
  }
  return probe;
}

const INSTALL_HINT = "install Debian's bubblewrap package (apt-get install bubblewrap)";

async function runProbe(bwrapPath: string): Promise<SandboxStatus> {
  try {
    accessSync(bwrapPath, constants.X_OK);
  } catch {
    return { available: false, reason: `bubblewrap was not found at ${bwrapPath}; ${INSTALL_HINT}` };
  }
  return new Promise((resolve) => {
    const child = spawn(bwrapPath, probeArgs(), { env: {}, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < 2000) stderr += chunk.toString("utf8");
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), PROBE_TIMEOUT_MS);
    child.on("error", (err) => {
      clearTimeout(timer);
      resolve({ available: false, reason: `bubblewrap at ${bwrapPath} could not start: ${err.message}` });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code === 0) return resolve({ available: true });
      const why = stderr.trim().split("\n")[0] || `exit code ${code}`;
      resolve({
        available: false,
        reason: `bubblewrap at ${bwrapPath} cannot create the sandbox (${why}); ${
          inContainer()
            ? CONTAINER_SANDBOX_HINT
            : "user namespaces may be refused (sysctl kernel.unprivileged_userns_clone=1, or run outside a restricted container)"
        }`,
      });
    });
  });
}
