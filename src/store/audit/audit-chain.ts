/**
 * The audit log's hash chain: each entry stores `sha256(prev_hash + canonical entry)`, so an entry
 * edited in place, or removed from the middle or the end, no longer matches what follows it or the
 * chain's head. Pure functions; the repository (audit-log.ts) stores and reads the rows.
 */
import { createHash } from "node:crypto";

/** The `prev_hash` of the first entry ever written. */
export const GENESIS_HASH = "0".repeat(64);

/** One stored entry, as its row holds it. */
export interface AuditRow {
  seq: number;
  at: number;
  actor_id: string | null;
  actor_name: string | null;
  action: string;
  target: string | null;
  ip: string | null;
  user_agent: string | null;
  instance: string | null;
  before_json: string | null;
  after_json: string | null;
  prev_hash: string;
  hash: string;
}

/** The hashed text of an entry: its fields in a fixed order, as JSON (nulls kept). */
export function canonicalEntry(row: Omit<AuditRow, "prev_hash" | "hash">): string {
  return JSON.stringify([
    Number(row.seq),
    Number(row.at),
    row.actor_id,
    row.actor_name,
    row.action,
    row.target,
    row.ip,
    row.user_agent,
    row.instance,
    row.before_json,
    row.after_json,
  ]);
}

/** The hash an entry must carry after `prevHash`. */
export function entryHash(prevHash: string, row: Omit<AuditRow, "prev_hash" | "hash">): string {
  return createHash("sha256").update(prevHash).update(canonicalEntry(row)).digest("hex");
}

/** Where the stored chain starts (after pruned entries) and ends. */
export interface ChainHead {
  seq: number;
  hash: string;
  pruned_seq: number;
  pruned_hash: string;
}

/** One thing wrong with the chain, at an entry. */
export interface ChainProblem {
  seq: number;
  problem: "edited" | "missing" | "relinked" | "tail_missing";
  message: string;
}

/**
 * Checks rows (in `seq` order, in pages) against the head. Feed pages with `check`, then `finish`.
 * Keeps only the last entry seen, so a log of any length is checked in constant memory.
 */
export class ChainVerifier {
  private expectedSeq: number;
  private prevHash: string;
  private checked = 0;
  readonly problems: ChainProblem[] = [];

  constructor(private readonly head: ChainHead) {
    this.expectedSeq = Number(head.pruned_seq) + 1;
    this.prevHash = head.pruned_hash;
  }

  check(rows: readonly AuditRow[]): void {
    for (const row of rows) {
      const seq = Number(row.seq);
      if (seq !== this.expectedSeq) {
        const count = seq - this.expectedSeq;
        this.problems.push({
          seq: this.expectedSeq,
          problem: "missing",
          message:
            count === 1
              ? `entry ${this.expectedSeq} was deleted`
              : `entries ${this.expectedSeq}-${seq - 1} were deleted`,
        });
      } else if (row.prev_hash !== this.prevHash) {
        this.problems.push({
          seq,
          problem: "relinked",
          message: `entry ${seq} does not follow entry ${seq - 1} (its previous hash differs)`,
        });
      }
      if (entryHash(row.prev_hash, row) !== row.hash) {
        this.problems.push({
          seq,
          problem: "edited",
          message: `entry ${seq} was changed after it was written`,
        });
      }
      this.expectedSeq = seq + 1;
      this.prevHash = row.hash;
      this.checked += 1;
    }
  }

  /** The result, once every row was checked. */
  finish(): { ok: boolean; checked: number; problems: ChainProblem[] } {
    const headSeq = Number(this.head.seq);
    if (this.expectedSeq - 1 < headSeq) {
      this.problems.push({
        seq: this.expectedSeq,
        problem: "tail_missing",
        message: `entries ${this.expectedSeq}-${headSeq} were deleted (the chain's head is at ${headSeq})`,
      });
    } else if (this.checked > 0 && this.prevHash !== this.head.hash) {
      this.problems.push({
        seq: headSeq,
        problem: "relinked",
        message: `the last entry (${headSeq}) does not match the chain's head`,
      });
    }
    return { ok: this.problems.length === 0, checked: this.checked, problems: this.problems };
  }
}
