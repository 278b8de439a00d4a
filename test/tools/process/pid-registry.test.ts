/**
 * The pid registry: a group left by a Dimsum that is gone is killed at the next start; a record whose
 * pid was reused (another start time) is dropped without killing; a live owner's records are kept.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PidRegistry, processStart } from "../../../src/tools/process/pid-registry.js";

const dirs: string[] = [];
const children: number[] = [];
afterEach(() => {
  for (const pid of children.splice(0)) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // Gone.
    }
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function registryDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "dimsum-pids-"));
  dirs.push(dir);
  return dir;
}

/** A sleeping process group, as a session process would be. */
function sleeper(): number {
  const child = spawn("/bin/sleep", ["60"], { detached: true, stdio: "ignore" });
  child.unref();
  children.push(child.pid as number);
  return child.pid as number;
}

function alive(pid: number): boolean {
  return processStart(pid) !== undefined && !/ Z /.test(String(readStat(pid)));
}

function readStat(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return "";
  }
}

/** Writes a record as another (now gone) Dimsum would have. */
function recordFromGoneOwner(dir: string, pid: number, start: string): void {
  writeFileSync(
    join(dir, `${pid}.json`),
    JSON.stringify({ pid, start, owner: 2 ** 22 + 1, ownerStart: "1", command: "sleep 60" }),
  );
}

describe("PidRegistry", () => {
  it("kills what a gone Dimsum left, and only when the pid's start time still matches", async () => {
    const dir = registryDir();
    const left = sleeper();
    const reused = sleeper();
    recordFromGoneOwner(dir, left, processStart(left) as string);
    recordFromGoneOwner(dir, reused, "12345");
    expect(new PidRegistry(dir).sweep()).toBe(1);
    await new Promise((r) => setTimeout(r, 200));
    expect(alive(left)).toBe(false);
    expect(alive(reused)).toBe(true);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("keeps the records of a live owner and forgets removed ones", () => {
    const dir = registryDir();
    const registry = new PidRegistry(dir);
    const pid = sleeper();
    registry.add(pid, "sleep 60");
    expect(readdirSync(dir)).toEqual([`${pid}.json`]);
    // This process wrote it and is alive: another instance's sweep (same records) leaves it alone.
    writeFileSync(
      join(dir, `${pid}.json`),
      JSON.stringify({
        pid,
        start: processStart(pid),
        owner: process.ppid,
        ownerStart: processStart(process.ppid),
        command: "x",
      }),
    );
    expect(registry.sweep()).toBe(0);
    expect(alive(pid)).toBe(true);
    registry.remove(pid);
    expect(readdirSync(dir)).toEqual([]);
  });
});
