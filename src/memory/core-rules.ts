/**
 * Core memory rules, whichever database holds the blocks: a few labelled text blocks per user (and
 * optionally per agent) that are always in the context. Each block has a character limit; an edit
 * that would pass it is refused with a reason the model can act on, because silently cutting text
 * would lose exactly what it meant to keep. The stores read the rows in scope, ask `planCoreEdit`
 * what to write, and write it.
 */
import { agentKey } from "./rows.js";
import type { CoreBlock, CoreEditResult, MemoryScope } from "./types.js";

export const DEFAULT_CORE_LIMIT = 2000;
export const MAX_CORE_BLOCKS = 16;
const LABEL = /^[a-z][a-z0-9_-]{0,31}$/;

/** A `core_memory` row (both backends use these column names). */
export interface CoreRow {
  agent_id: string;
  label: string;
  value: string;
  char_limit: number;
  updated_at: number;
}

export function toBlock(row: CoreRow): CoreBlock {
  const block: CoreBlock = {
    label: row.label,
    value: row.value,
    limit: row.char_limit,
    updatedAt: row.updated_at,
  };
  if (row.agent_id !== "") block.agentId = row.agent_id;
  return block;
}

/** Labels are matched trimmed and in lower case. */
export function normalizeLabel(raw: string): string {
  return raw.trim().toLowerCase();
}

function refuse(reason: string): { ok: false; reason: string } {
  return { ok: false, reason };
}

/**
 * The blocks in scope from the user's rows with agent '' or the scope's agent, ordered by label then
 * agent: an agent's own block replaces a shared one of the same label.
 */
export function scopedBlocks(rows: readonly CoreRow[]): CoreBlock[] {
  const byLabel = new Map<string, CoreRow>();
  for (const row of rows) {
    const seen = byLabel.get(row.label);
    if (!seen || row.agent_id !== "") byLabel.set(row.label, row);
  }
  return [...byLabel.values()].map(toBlock);
}

export type CoreEdit =
  | { kind: "append"; text: string }
  | { kind: "replace"; oldText: string; newText: string }
  | { kind: "set"; value: string; limit?: number | undefined };

/**
 * What an edit of `rawLabel` writes, given the rows in scope (as for scopedBlocks): the row to upsert,
 * or a refusal. Appending adds a line (creating the block); replacing changes every occurrence of
 * the old text; setting replaces the whole value (and optionally the limit).
 */
export function planCoreEdit(
  scope: MemoryScope,
  rawLabel: string,
  edit: CoreEdit,
  rows: readonly CoreRow[],
  defaultLimit: number,
  now: number,
): { ok: true; row: CoreRow } | { ok: false; reason: string } {
  const label = normalizeLabel(rawLabel);
  if (edit.kind === "append" && edit.text.trim() === "")
    return refuse("Nothing to append: the text is empty.");
  if (edit.kind === "replace" && edit.oldText === "")
    return refuse("`old` is empty: give the exact text to replace.");
  if (!LABEL.test(label)) {
    return refuse(
      `"${label}" is not a valid block label: use 1-32 lower-case letters, digits, "_" or "-", starting with a letter (e.g. "user", "persona").`,
    );
  }
  const agent = agentKey(scope.agentId);
  const own = rows.find((r) => r.label === label && r.agent_id === agent);
  const row = own ?? rows.find((r) => r.label === label);
  if (!row && new Set(rows.map((r) => r.label)).size >= MAX_CORE_BLOCKS) {
    return refuse(
      `There are already ${MAX_CORE_BLOCKS} core memory blocks; add to an existing block instead.`,
    );
  }
  let value: string;
  let limit = row?.char_limit ?? defaultLimit;
  if (edit.kind === "append") {
    const addition = edit.text.trim();
    value = row && row.value !== "" ? `${row.value}\n${addition}` : addition;
  } else if (edit.kind === "replace") {
    if (!row?.value.includes(edit.oldText)) {
      return refuse(
        `Core memory block "${label}" does not contain the text to replace; nothing changed. ` +
          "Copy `old` exactly from the block as shown in the context.",
      );
    }
    value = row.value
      .replaceAll(edit.oldText, edit.newText)
      .replace(/\n{3,}/g, "\n\n")
      .trim();
  } else {
    limit = edit.limit ?? limit;
    if (!Number.isInteger(limit) || limit < 1)
      return refuse(`The limit must be a positive integer (got ${limit}).`);
    value = edit.value.trim();
  }
  if (value.length > limit) {
    return refuse(
      `Core memory block "${label}" would hold ${value.length} characters, over its limit of ${limit}; nothing changed. ` +
        "Condense it first with core_memory_replace (merge or shorten lines, drop what no longer matters), " +
        "or keep the detail in archival memory with memory_write.",
    );
  }
  return {
    ok: true,
    row: { agent_id: row ? row.agent_id : agent, label, value, char_limit: limit, updated_at: now },
  };
}

/** The result of a planned edit once written. */
export function editResult(plan: { ok: true; row: CoreRow } | { ok: false; reason: string }): CoreEditResult {
  return plan.ok ? { ok: true, block: toBlock(plan.row) } : plan;
}

/** Core memory blocks on some database; every edit reads and writes the rows in one transaction. */
export interface CoreMemory {
  /** The blocks in scope, by label; an agent's own block replaces a shared one of the same label. */
  blocks(scope: MemoryScope): Promise<CoreBlock[]>;
  /** Every block of the user, shared and per agent, by label then agent. */
  all(userId: string): Promise<CoreBlock[]>;
  /** Deletes the block of exactly this scope (the agent's own, or the shared one without an agent). */
  remove(scope: MemoryScope, rawLabel: string): Promise<boolean>;
  edit(scope: MemoryScope, rawLabel: string, edit: CoreEdit): Promise<CoreEditResult>;
}
