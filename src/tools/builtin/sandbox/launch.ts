/**
 * How one command is started: inside bubblewrap when the sandbox works, else directly; in a fresh
 * cgroup (process and memory limits) when the machine gives us one, joined before anything runs.
 */
import { bwrapArgs } from "./bwrap-args.js";
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
}

// Writes its own pid to each cgroup.procs file given before `--`, then execs the rest.
const JOIN_CGROUP = 'while [ "$1" != "--" ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"';

/** The process to spawn for a command. */
export function planLaunch(request: LaunchRequest): LaunchPlan {
  const { sandbox } = request;
  const cgroup = createCommandCgroup(sandbox.limits);
  const argv = limitedShellArgv(request.command, sandbox.limits, {
    processes: cgroup !== undefined,
    memory: cgroup?.boundsMemory ?? false,
  });
  const env = commandEnv(sandbox.env, request.workspace);
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
