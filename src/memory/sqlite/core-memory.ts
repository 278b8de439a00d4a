/**
 * Core memory: a few labelled text blocks per user (and optionally per agent) that are always in the
 * context. Each block has a character limit; an edit that would pass it is refused with a reason the
 * model can act on, because silently cutting text would lose exactly what it meant to keep.
 */
import type { Database } from "better-sqlite3";
import type { CoreBlock, CoreEditResult, MemoryScope } from "../types.js";
import { agentKey } from "./rows.js";

export const DEFAULT_CORE_LIMIT = 2000;
export const MAX_CORE_BLOCKS = 16;
const LABEL = /^[a-z][a-z0-9_-]{0,31}$/;

interface CoreRow {
  agent_id: string;
  label: string;
  value: string;
  char_limit: number;
  updated_at: number;
}

export interface CoreMemoryOptions {
  defaultLimit?: number;
  now?: () => number;
}

function toBlock(row: CoreRow): CoreBlock {
  const block: CoreBlock = {
    label: row.label,
    value: row.value,
    limit: row.char_limit,
    updatedAt: row.updated_at,
  };
  if (row.agent_id !== "") block.agentId = row.agent_id;
  return block;
}

function refuse(reason: string): CoreEditResult {
  return { ok: false, reason };
}

/** Core memory blocks on SQLite. */
export class SqliteCoreMemory {
  private readonly defaultLimit: number;
  private readonly now: () => number;
  private readonly rows;
  private readonly upsert;
  private readonly allRows;
  private readonly removeRow;

  constructor(db: Database, options: CoreMemoryOptions = {}) {
    this.defaultLimit = options.defaultLimit ?? DEFAULT_CORE_LIMIT;
    this.now = options.now ?? Date.now;
    this.rows = db.prepare<[string, string], CoreRow>(
      `SELECT agent_id, label, value, char_limit, updated_at FROM core_memory
       WHERE user_id = ? AND agent_id IN ('', ?) ORDER BY label, agent_id`,
    );
    this.allRows = db.prepare<[string], CoreRow>(
      `SELECT agent_id, label, value, char_limit, updated_at FROM core_memory
       WHERE user_id = ? ORDER BY label, agent_id`,
    );
    this.removeRow = db.prepare<[string, string, string]>(
      "DELETE FROM core_memory WHERE user_id = ? AND agent_id = ? AND label = ?",
    );
    this.upsert = db.prepare<[string, string, string, string, number, number]>(
      `INSERT INTO core_memory (user_id, agent_id, label, value, char_limit, updated_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (user_id, agent_id, label) DO UPDATE SET value = excluded.value,
         char_limit = excluded.char_limit, updated_at = excluded.updated_at`,
    );
  }

  /** Every block of the user, shared and per agent, by label then agent. */
  all(userId: string): CoreBlock[] {
    return this.allRows.all(userId).map(toBlock);
  }

  /** Deletes the block of exactly this scope (the agent's own, or the shared one without an agent). */
  remove(scope: MemoryScope, rawLabel: string): boolean {
    return (
      this.removeRow.run(scope.userId, agentKey(scope.agentId), rawLabel.trim().toLowerCase()).changes > 0
    );
  }

  /** The blocks in scope, by label; an agent's own block replaces a shared one of the same label. */
  blocks(scope: MemoryScope): CoreBlock[] {
    const byLabel = new Map<string, CoreRow>();
    for (const row of this.rows.all(scope.userId, agentKey(scope.agentId))) {
      const seen = byLabel.get(row.label);
      if (!seen || row.agent_id !== "") byLabel.set(row.label, row);
    }
    return [...byLabel.values()].map(toBlock);
  }

  /** Appends a line to a block, creating it if needed; refused when the block would pass its limit. */
  append(scope: MemoryScope, rawLabel: string, text: string): CoreEditResult {
    const label = rawLabel.trim().toLowerCase();
    const addition = text.trim();
    if (addition === "") return refuse("Nothing to append: the text is empty.");
    const found = this.find(scope, label);
    if ("ok" in found) return found;
    const value = found.row && found.row.value !== "" ? `${found.row.value}\n${addition}` : addition;
    return this.write(scope, label, found.row, value);
  }

  /** Replaces every occurrence of `oldText` in a block; refused when absent or when the result is too long. */
  replace(scope: MemoryScope, rawLabel: string, oldText: string, newText: string): CoreEditResult {
    const label = rawLabel.trim().toLowerCase();
    if (oldText === "") return refuse("`old` is empty: give the exact text to replace.");
    const found = this.find(scope, label);
    if ("ok" in found) return found;
    if (!found.row?.value.includes(oldText)) {
      return refuse(
        `Core memory block "${label}" does not contain the text to replace; nothing changed. ` +
          "Copy `old` exactly from the block as shown in the context.",
      );
    }
    const value = found.row.value
      .replaceAll(oldText, newText)
      .replace(/\n{3,}/g, "\n\n")
      .trim();
    return this.write(scope, label, found.row, value);
  }

  /** Sets a block's whole value (and optionally its limit); refused when the value is too long. */
  set(scope: MemoryScope, rawLabel: string, value: string, limit?: number): CoreEditResult {
    const label = rawLabel.trim().toLowerCase();
    const found = this.find(scope, label);
    if ("ok" in found) return found;
    const charLimit = limit ?? found.row?.char_limit ?? this.defaultLimit;
    if (!Number.isInteger(charLimit) || charLimit < 1)
      return refuse(`The limit must be a positive integer (got ${charLimit}).`);
    return this.write(scope, label, found.row, value.trim(), charLimit);
  }

  /** The row an edit of `label` applies to: the agent's block, else the shared one, else none yet. */
  private find(scope: MemoryScope, label: string): { row: CoreRow | undefined } | CoreEditResult {
    if (!LABEL.test(label)) {
      return refuse(
        `"${label}" is not a valid block label: use 1-32 lower-case letters, digits, "_" or "-", starting with a letter (e.g. "user", "persona").`,
      );
    }
    const rows = this.rows.all(scope.userId, agentKey(scope.agentId));
    const own = rows.find((r) => r.label === label && r.agent_id === agentKey(scope.agentId));
    const row = own ?? rows.find((r) => r.label === label);
    if (!row && new Set(rows.map((r) => r.label)).size >= MAX_CORE_BLOCKS) {
      return refuse(
        `There are already ${MAX_CORE_BLOCKS} core memory blocks; add to an existing block instead.`,
      );
    }
    return { row };
  }

  private write(
    scope: MemoryScope,
    label: string,
    row: CoreRow | undefined,
    value: string,
    limit = row?.char_limit ?? this.defaultLimit,
  ): CoreEditResult {
    if (value.length > limit) {
      return refuse(
        `Core memory block "${label}" would hold ${value.length} characters, over its limit of ${limit}; nothing changed. ` +
          "Condense it first with core_memory_replace (merge or shorten lines, drop what no longer matters), " +
          "or keep the detail in archival memory with memory_write.",
      );
    }
    const agent = row ? row.agent_id : agentKey(scope.agentId);
    const now = this.now();
    this.upsert.run(scope.userId, agent, label, value, limit, now);
    return {
      ok: true,
      block: toBlock({ agent_id: agent, label, value, char_limit: limit, updated_at: now }),
    };
  }
}
