/**
 * Where the session processes' process groups are written down (one small file each), so a server
 * that was killed without stopping them finds and ends them when it starts again. A record is
 * trusted only when the pid's start time still matches (the pid was not reused) and the Dimsum that
 * wrote it is gone (another live instance keeps its own).
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

interface PidRecord {
  pid: number;
  start: string;
  owner: number;
  ownerStart: string;
  command: string;
}

/** The start time of a process (clock ticks since boot), or undefined when it is gone. */
export function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may contain spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[19];
  } catch {
    return undefined;
  }
}

/** The records of one home's session processes. */
export class PidRegistry {
  readonly #dir: string;

  constructor(dir: string) {
    this.#dir = dir;
  }

  /** Writes down a started process group. */
  add(pid: number, command: string): void {
    const start = processStart(pid);
    if (start === undefined) return;
    const record: PidRecord = {
      pid,
      start,
      owner: process.pid,
      ownerStart: processStart(process.pid) ?? "",
      command: command.slice(0, 200),
    };
    mkdirSync(this.#dir, { recursive: true, mode: 0o700 });
    writeFileSync(join(this.#dir, `${pid}.json`), JSON.stringify(record), { mode: 0o600 });
  }

  /** Forgets a process group that ended. */
  remove(pid: number): void {
    rmSync(join(this.#dir, `${pid}.json`), { force: true });
  }

  /** Kills the groups left by a Dimsum that is gone; returns how many were still running. */
  sweep(): number {
    let files: string[];
    try {
      files = readdirSync(this.#dir).filter((f) => f.endsWith(".json"));
    } catch {
      return 0;
    }
    let killed = 0;
    for (const file of files) {
      const path = join(this.#dir, file);
      let record: PidRecord;
      try {
        record = JSON.parse(readFileSync(path, "utf8")) as PidRecord;
      } catch {
        rmSync(path, { force: true });
        continue;
      }
      const ownerAlive = record.owner !== process.pid && processStart(record.owner) === record.ownerStart;
      if (ownerAlive) continue;
      if (processStart(record.pid) === record.start) {
        try {
          process.kill(-record.pid, "SIGKILL");
        } catch {
          // Not a group leader any more: the process alone.
          try {
            process.kill(record.pid, "SIGKILL");
          } catch {
            // Gone meanwhile.
          }
        }
        killed++;
      }
      rmSync(path, { force: true });
    }
    return killed;
  }
}
