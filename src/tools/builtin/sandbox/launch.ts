/**
 * How one command is started: inside bubblewrap when the sandbox works, else directly; in a fresh
 * cgroup (process and memory limits) when the machine gives us one, joined before anything runs.
 */
import { BRIDGE_MOUNT, BRIDGE_NODE, BRIDGE_SCRIPT, bridgePrologue, PROXY_PORT } from "./bridge.js";
import { bwrapArgs, isInside, SYSTEM_PATHS } from "./bwrap-args.js";
import { type CommandCgroup, createCommandCgroup } from "./cgroup.js";
import { commandEnv } from "./env.js";
import { limitedShellArgv } from "./limits.js";
import type { ShellSandboxConfig } from "./types.js";

export interface LaunchPlan {
  file: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** The command's cgroup; the runner kills and removes it at the end. */
  cgroup: CommandCgroup | undefined;
  sandboxed: boolean;
  /** What bounds the number of processes. */
  processLimit: "cgroup-v1" | "cgroup-v2" | "rlimit";
}

export interface LaunchRequest {
  command: string;
  workspace: string;
  cwd: string;
  sandbox: ShellSandboxConfig;
  /** Whether to use bubblewrap (the probe said it works). */
  sandboxed: boolean;
  /**
   * The network bridge's shared folder (sandboxed only, see bridge.ts): `proxy` when the command's
   * way out is the allow-list proxy listening on `<dir>/proxy.sock`.
   */
  bridge?: { dir: string; proxy: boolean };
}

// Writes its own pid to each cgroup.procs file given before `--`, then execs the rest.
const JOIN_CGROUP = 'while [ "$1" != "--" ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"';

/** The process to spawn for a command. */
export function planLaunch(request: LaunchRequest): LaunchPlan {
  const { sandbox } = request;
  const cgroup = createCommandCgroup(sandbox.limits);
  const bridge = request.sandboxed ? request.bridge : undefined;
  const nodeInside = SYSTEM_PATHS.some((p) => isInside(process.execPath, p)) ? process.execPath : BRIDGE_NODE;
  const argv = limitedShellArgv(
    request.command,
    sandbox.limits,
    { processes: cgroup !== undefined, memory: cgroup?.boundsMemory ?? false },
    bridge ? bridgePrologue() : [],
    bridge ? [BRIDGE_SCRIPT, nodeInside, bridge.proxy ? String(PROXY_PORT) : ""] : [],
  );
  const env = { ...commandEnv(sandbox.env, request.workspace), ...(bridge?.proxy ? proxyEnv() : {}) };
  let file: string;
  let args: string[];
  let spawnEnv: Record<string, string>;
  if (request.sandboxed) {
    file = sandbox.bwrapPath;
    args = bwrapArgs({
      workspace: request.workspace,
      cwd: request.cwd,
      env,
      network: sandbox.network,
      hidePaths: sandbox.hidePaths,
      argv,
      ...(bridge
        ? {
            binds: [
              [bridge.dir, BRIDGE_MOUNT, false] as const,
              ...(nodeInside === BRIDGE_NODE ? [[process.execPath, BRIDGE_NODE, true] as const] : []),
            ],
          }
        : {}),
    });
    // bubblewrap's own environment shows in the sandbox's /proc/1/environ: give it none.
    spawnEnv = {};
  } else {
    [file, ...args] = argv as [string, ...string[]];
    spawnEnv = env;
  }
  if (cgroup) {
    args = ["-c", JOIN_CGROUP, "dimsum-cgroup", ...cgroup.procsFiles, "--", file, ...args];
    file = "/bin/sh";
  }
  return {
    file,
    args,
    env: spawnEnv,
    cwd: request.cwd,
    cgroup,
    sandboxed: request.sandboxed,
    processLimit: cgroup?.kind ?? "rlimit",
  };
}

/** Variables pointing HTTP clients (npm, pip, curl, apt) at the proxy; loopback stays direct. */
function proxyEnv(): Record<string, string> {
  const url = `http://127.0.0.1:${PROXY_PORT}`;
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    NO_PROXY: "localhost,127.0.0.1,::1",
    no_proxy: "localhost,127.0.0.1,::1",
  };
}
