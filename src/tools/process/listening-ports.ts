/**
 * Ports listened on inside a sandbox, read from the host: the TCP tables of the sandbox's network
 * namespace (`/proc/<pid>/net/tcp{,6}` of a process inside it), found by walking the launcher's
 * descendants to the first one in another network namespace than Dimsum's.
 */
import { readFileSync, readlinkSync } from "node:fs";

function netNamespace(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/net`);
  } catch {
    return undefined;
  }
}

function children(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8")
      .trim()
      .split(/\s+/)
      .filter((s) => s !== "")
      .map(Number);
  } catch {
    return [];
  }
}

/** A descendant of `root` (or root) living in another network namespace, breadth first. */
function sandboxMember(root: number): number | undefined {
  const own = netNamespace(process.pid);
  const queue = [root];
  for (let seen = 0; queue.length > 0 && seen < 200; seen++) {
    const pid = queue.shift() as number;
    const ns = netNamespace(pid);
    if (ns !== undefined && ns !== own) return pid;
    queue.push(...children(pid));
  }
  return undefined;
}

/** Listening ports in a `/proc/net/tcp`-style table. */
export function parseListening(table: string): number[] {
  const ports = new Set<number>();
  for (const line of table.split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields[3] !== "0A") continue; // TCP_LISTEN
    const port = Number.parseInt((fields[1] ?? "").split(":")[1] ?? "", 16);
    if (Number.isInteger(port) && port > 0) ports.add(port);
  }
  return [...ports];
}

/** Ports listening in the sandbox started by `root` (empty when it shares Dimsum's network). */
export function listeningPorts(root: number): number[] {
  const member = sandboxMember(root);
  if (member === undefined) return [];
  const ports = new Set<number>();
  for (const file of ["tcp", "tcp6"]) {
    try {
      for (const port of parseListening(readFileSync(`/proc/${member}/net/${file}`, "utf8"))) ports.add(port);
    } catch {
      // The process ended meanwhile.
    }
  }
  return [...ports].sort((a, b) => a - b);
}
