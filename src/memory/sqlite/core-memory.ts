/** Core memory blocks on SQLite (the rules are in ../core-rules.ts). */
import type { Database } from "better-sqlite3";
import {
  type CoreEdit,
  type CoreRow,
  DEFAULT_CORE_LIMIT,
  editResult,
  normalizeLabel,
  planCoreEdit,
  scopedBlocks,
  toBlock,
} from "../core-rules.js";
import { agentKey } from "../rows.js";
import type { CoreBlock, CoreEditResult, MemoryScope } from "../types.js";

export { DEFAULT_CORE_LIMIT, MAX_CORE_BLOCKS } from "../core-rules.js";

export interface CoreMemoryOptions {
  defaultLimit?: number;
  now?: () => number;
}

/** Core memory blocks on one SQLite connection; an edit runs in one transaction. */
export class SqliteCoreMemory {
  private readonly defaultLimit: number;
  private readonly now: () => number;
  private readonly rows;
  private readonly upsert;
  private readonly allRows;
  private readonly removeRow;
  private readonly editTx: (scope: MemoryScope, label: string, edit: CoreEdit) => CoreEditResult;

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
    this.editTx = db.transaction((scope: MemoryScope, label: string, edit: CoreEdit) => {
      const rows = this.rows.all(scope.userId, agentKey(scope.agentId));
      const plan = planCoreEdit(scope, label, edit, rows, this.defaultLimit, this.now());
      if (plan.ok) {
        const row = plan.row;
        this.upsert.run(scope.userId, row.agent_id, row.label, row.value, row.char_limit, row.updated_at);
      }
      return editResult(plan);
    });
  }

  /** Every block of the user, shared and per agent, by label then agent. */
  all(userId: string): CoreBlock[] {
    return this.allRows.all(userId).map(toBlock);
  }

  /** Deletes the block of exactly this scope (the agent's own, or the shared one without an agent). */
  remove(scope: MemoryScope, rawLabel: string): boolean {
    return this.removeRow.run(scope.userId, agentKey(scope.agentId), normalizeLabel(rawLabel)).changes > 0;
  }

  /** The blocks in scope, by label; an agent's own block replaces a shared one of the same label. */
  blocks(scope: MemoryScope): CoreBlock[] {
    return scopedBlocks(this.rows.all(scope.userId, agentKey(scope.agentId)));
  }

  /** Appends, replaces or sets a block (see planCoreEdit); refused edits change nothing. */
  edit(scope: MemoryScope, rawLabel: string, edit: CoreEdit): CoreEditResult {
    return this.editTx(scope, rawLabel, edit);
  }

  /** Appends a line to a block, creating it if needed; refused when the block would pass its limit. */
  append(scope: MemoryScope, rawLabel: string, text: string): CoreEditResult {
    return this.edit(scope, rawLabel, { kind: "append", text });
  }

  /** Replaces every occurrence of `oldText` in a block; refused when absent or when the result is too long. */
  replace(scope: MemoryScope, rawLabel: string, oldText: string, newText: string): CoreEditResult {
    return this.edit(scope, rawLabel, { kind: "replace", oldText, newText });
  }

  /** Sets a block's whole value (and optionally its limit); refused when the value is too long. */
  set(scope: MemoryScope, rawLabel: string, value: string, limit?: number): CoreEditResult {
    return this.edit(scope, rawLabel, { kind: "set", value, limit });
  }
}
