/**
 * Core memory blocks, one repository over SQLite and PostgreSQL (the rules are in core-rules.ts). An
 * edit reads the blocks in scope and writes one in one transaction; on PostgreSQL under an advisory
 * lock on the user, so two instances appending to the same block at once both land, one after the
 * other (SQLite's transaction already holds the only write lock).
 */
import { many, one, run, type SqlDatabase, sql } from "../store/sql-database.js";
import {
  type CoreEdit,
  type CoreMemory,
  type CoreRow,
  DEFAULT_CORE_LIMIT,
  editResult,
  normalizeLabel,
  planCoreEdit,
  scopedBlocks,
  toBlock,
} from "./core-rules.js";
import { agentKey } from "./rows.js";
import type { CoreBlock, CoreEditResult, MemoryScope } from "./types.js";

// The first key of the advisory locks core memory edits take (the second is the user's hash).
const CORE_LOCK = 741_203;

const COLUMNS = "SELECT agent_id, label, value, char_limit, updated_at FROM core_memory";
// Labels and agent ids in byte order, as SQLite sorts them, whatever the PostgreSQL database's collation.
const ORDER = {
  sqlite: "ORDER BY label, agent_id",
  postgres: 'ORDER BY label COLLATE "C", agent_id COLLATE "C"',
};

const SQL = {
  scoped: sql({
    sqlite: `${COLUMNS} WHERE user_id = ? AND agent_id IN ('', ?) ${ORDER.sqlite}`,
    postgres: `${COLUMNS} WHERE user_id = ? AND agent_id IN ('', ?) ${ORDER.postgres}`,
  }),
  all: sql({
    sqlite: `${COLUMNS} WHERE user_id = ? ${ORDER.sqlite}`,
    postgres: `${COLUMNS} WHERE user_id = ? ${ORDER.postgres}`,
  }),
  remove: sql("DELETE FROM core_memory WHERE user_id = ? AND agent_id = ? AND label = ?"),
  lock: sql({ sqlite: "SELECT ?, ?", postgres: "SELECT pg_advisory_xact_lock(?::int, hashtext(?))" }),
  upsert: sql(
    `INSERT INTO core_memory (user_id, agent_id, label, value, char_limit, updated_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (user_id, agent_id, label) DO UPDATE SET value = excluded.value,
       char_limit = excluded.char_limit, updated_at = excluded.updated_at`,
  ),
} as const;

export interface CoreMemoryOptions {
  defaultLimit?: number;
  now?: () => number;
}

export class CoreMemoryRepo implements CoreMemory {
  private readonly defaultLimit: number;
  private readonly now: () => number;

  constructor(
    private readonly db: SqlDatabase,
    options: CoreMemoryOptions = {},
  ) {
    this.defaultLimit = options.defaultLimit ?? DEFAULT_CORE_LIMIT;
    this.now = options.now ?? Date.now;
  }

  /** The blocks in scope, by label; an agent's own block replaces a shared one of the same label. */
  async blocks(scope: MemoryScope): Promise<CoreBlock[]> {
    return scopedBlocks(
      await this.db.many<CoreRow>("read core memory from", SQL.scoped, [
        scope.userId,
        agentKey(scope.agentId),
      ]),
    );
  }

  /** Every block of the user, shared and per agent, by label then agent. */
  async all(userId: string): Promise<CoreBlock[]> {
    return (await this.db.many<CoreRow>("read core memory from", SQL.all, [userId])).map(toBlock);
  }

  /** Deletes the block of exactly this scope (the agent's own, or the shared one without an agent). */
  async remove(scope: MemoryScope, rawLabel: string): Promise<boolean> {
    const params = [scope.userId, agentKey(scope.agentId), normalizeLabel(rawLabel)];
    return (await this.db.run("write to core memory in", SQL.remove, params)) > 0;
  }

  /** Appends, replaces or sets a block (see planCoreEdit); refused edits change nothing. */
  edit(scope: MemoryScope, rawLabel: string, edit: CoreEdit): Promise<CoreEditResult> {
    const { defaultLimit, now } = this;
    return this.db.transaction("write to core memory in", function* () {
      yield* one(SQL.lock, [CORE_LOCK, scope.userId]);
      const rows = yield* many<CoreRow>(SQL.scoped, [scope.userId, agentKey(scope.agentId)]);
      const plan = planCoreEdit(scope, rawLabel, edit, rows, defaultLimit, now());
      if (plan.ok) {
        const row = plan.row;
        yield* run(SQL.upsert, [
          scope.userId,
          row.agent_id,
          row.label,
          row.value,
          row.char_limit,
          row.updated_at,
        ]);
      }
      return editResult(plan);
    });
  }
}
