/**
 * A cgroup per sandboxed command bounding its processes (pids.max) and memory. RLIMIT_NPROC does
 * not bind root, so this is the process limit that holds when Dimsum runs as root. Works with
 * cgroup v2 (a child of this process's cgroup with the pids controller delegated) and with v1
 * (a child in the pids and memory hierarchies). Undefined when neither is writable.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const CGROUP_ROOT = "/sys/fs/cgroup";

export interface CommandCgroup {
  kind: "cgroup-v1" | "cgroup-v2";
  /** `cgroup.procs` files a process writes its pid to, to join (one per hierarchy). */
  procsFiles: string[];
  /** Whether memory is bounded here too (else `ulimit -v` stands in). */
  boundsMemory: boolean;
  /** Kills every process still in the cgroup. */
  kill(): void;
  /** Removes the cgroup once empty (best effort). */
  remove(): void;
}

export interface CgroupLimits {
  processes: number;
  memoryBytes: number;
}

let counter = 0;

/** This process's cgroup paths: `""` for v2, controller names for v1. */
function ownCgroups(): Map<string, string> {
  const map = new Map<string, string>();
  let text = "";
  try {
    text = readFileSync("/proc/self/cgroup", "utf8");
  } catch {
    return map;
  }
  for (const line of text.split("\n")) {
    const match = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!match) continue;
    for (const name of (match[1] as string).split(",")) map.set(name, match[2] as string);
  }
  return map;
}

function write(path: string, value: string): boolean {
  try {
    writeFileSync(path, value);
    return true;
  } catch {
    return false;
  }
}

function killAll(dirs: string[]): void {
  for (const dir of dirs) {
    if (write(join(dir, "cgroup.kill"), "1")) continue;
    // v1 has no cgroup.kill: signal each member; a few rounds catch processes forked meanwhile.
    for (let round = 0; round < 5; round++) {
      let pids: string[] = [];
      try {
        pids = readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean);
      } catch {
        break;
      }
      if (pids.length === 0) break;
      for (const pid of pids) {
        try {
          process.kill(Number(pid), "SIGKILL");
        } catch {
          // Already gone.
        }
      }
    }
  }
}

const REMOVE_TRIES = 40;
const REMOVE_PAUSE_MS = 50;

/** Removes the cgroups; while killed processes are still exiting, tries again a little later. */
function removeAll(dirs: string[], tries = REMOVE_TRIES): void {
  const busy = dirs.filter((dir) => {
    try {
      rmdirSync(dir);
      return false;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === "EBUSY";
    }
  });
  if (busy.length > 0 && tries > 1) {
    killAll(busy);
    setTimeout(() => removeAll(busy, tries - 1), REMOVE_PAUSE_MS).unref();
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

let swept = false;

/** Once per process: empties and removes cgroups left by Dimsum processes that were killed. */
function sweepStale(parents: string[]): void {
  if (swept) return;
  swept = true;
  for (const parent of parents) {
    let names: string[] = [];
    try {
      names = readdirSync(parent);
    } catch {
      continue;
    }
    for (const name of names) {
      const match = /^dimsum-(\d+)-\d+$/.exec(name);
      if (!match || isAlive(Number(match[1]))) continue;
      const dir = join(parent, name);
      killAll([dir]);
      removeAll([dir]);
    }
  }
}

function make(dir: string): boolean {
  try {
    mkdirSync(dir);
    return true;
  } catch {
    return false;
  }
}

function v2(name: string, limits: CgroupLimits, own: Map<string, string>): CommandCgroup | undefined {
  if (!existsSync(join(CGROUP_ROOT, "cgroup.controllers"))) return undefined;
  const parent = join(CGROUP_ROOT, own.get("") ?? "/");
  let delegated = "";
  try {
    delegated = readFileSync(join(parent, "cgroup.subtree_control"), "utf8");
  } catch {
    return undefined;
  }
  if (!/\bpids\b/.test(delegated) && !write(join(parent, "cgroup.subtree_control"), "+pids"))
    return undefined;
  if (!/\bmemory\b/.test(delegated)) write(join(parent, "cgroup.subtree_control"), "+memory");
  const dir = join(parent, name);
  if (!make(dir)) return undefined;
  if (!write(join(dir, "pids.max"), String(limits.processes))) {
    removeAll([dir]);
    return undefined;
  }
  const boundsMemory = write(join(dir, "memory.max"), String(limits.memoryBytes));
  write(join(dir, "memory.swap.max"), "0");
  return {
    kind: "cgroup-v2",
    procsFiles: [join(dir, "cgroup.procs")],
    boundsMemory,
    kill: () => killAll([dir]),
    remove: () => removeAll([dir]),
  };
}

function v1(name: string, limits: CgroupLimits, own: Map<string, string>): CommandCgroup | undefined {
  const pidsRoot = join(CGROUP_ROOT, "pids");
  if (!existsSync(join(pidsRoot, "tasks")) || !own.has("pids")) return undefined;
  const pidsDir = join(pidsRoot, own.get("pids") as string, name);
  if (!make(pidsDir)) return undefined;
  if (!write(join(pidsDir, "pids.max"), String(limits.processes))) {
    removeAll([pidsDir]);
    return undefined;
  }
  const dirs = [pidsDir];
  const memoryRoot = join(CGROUP_ROOT, "memory");
  if (existsSync(join(memoryRoot, "tasks")) && own.has("memory")) {
    const memoryDir = join(memoryRoot, own.get("memory") as string, name);
    if (make(memoryDir)) {
      if (write(join(memoryDir, "memory.limit_in_bytes"), String(limits.memoryBytes))) {
        write(join(memoryDir, "memory.memsw.limit_in_bytes"), String(limits.memoryBytes));
        dirs.push(memoryDir);
      } else removeAll([memoryDir]);
    }
  }
  return {
    kind: "cgroup-v1",
    procsFiles: dirs.map((d) => join(d, "cgroup.procs")),
    boundsMemory: dirs.length > 1,
    kill: () => killAll(dirs),
    remove: () => removeAll(dirs),
  };
}

/** A fresh cgroup with the limits, or undefined when this machine gives us none. */
export function createCommandCgroup(limits: CgroupLimits): CommandCgroup | undefined {
  counter += 1;
  const name = `dimsum-${process.pid}-${counter}`;
  const own = ownCgroups();
  sweepStale([
    join(CGROUP_ROOT, own.get("") ?? "/"),
    join(CGROUP_ROOT, "pids", own.get("pids") ?? "/"),
    join(CGROUP_ROOT, "memory", own.get("memory") ?? "/"),
  ]);
  return v2(name, limits, own) ?? v1(name, limits, own);
}
