/**
 * Limits as a shell prologue run inside the sandbox before the command: CPU time and file size
 * always; process count and address space only when no cgroup bounds them (RLIMIT_NPROC does not
 * bind root, so the cgroup is the real process limit when Dimsum runs as root).
 */
import type { SandboxLimits } from "./types.js";

export const DEFAULT_LIMITS: SandboxLimits = {
  processes: 256,
  memoryBytes: 1024 * 1024 * 1024,
  cpuSeconds: 300,
  fileBytes: 1024 * 1024 * 1024,
  floodBytes: 16 * 1024 * 1024,
};

/** What a cgroup already bounds (then the weaker per-process rlimit is not set). */
export interface CgroupBounds {
  processes: boolean;
  memory: boolean;
}

/** `/bin/sh -c` text setting the limits, then running the command given as `$1` (after `before`). */
export function limitPrologue(
  limits: SandboxLimits,
  bounds: CgroupBounds,
  before: readonly string[] = [],
): string {
  const lines = [
    ...before,
    `ulimit -t ${limits.cpuSeconds}`,
    `ulimit -f ${Math.ceil(limits.fileBytes / 512)}`,
  ];
  // dash spells the process limit -p, bash -u.
  if (!bounds.processes)
    lines.push(`{ ulimit -p ${limits.processes} || ulimit -u ${limits.processes}; } 2>/dev/null`);
  if (!bounds.memory) lines.push(`ulimit -v ${Math.ceil(limits.memoryBytes / 1024)} 2>/dev/null`);
  lines.push('exec /bin/sh -c "$1"');
  return lines.join("\n");
}

/** argv running `command` under the limits; `before` are shell lines run first, `extra` their `$2`… */
export function limitedShellArgv(
  command: string,
  limits: SandboxLimits,
  bounds: CgroupBounds,
  before: readonly string[] = [],
  extra: readonly string[] = [],
): string[] {
  return ["/bin/sh", "-c", limitPrologue(limits, bounds, before), "dimsum-shell", command, ...extra];
}
