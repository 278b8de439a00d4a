/**
 * Core memory blocks on PostgreSQL (the rules are in ../core-rules.ts). An edit reads the blocks in
 * scope and writes one under a transaction-scoped advisory lock on the user, so two instances
 * appending to the same block at once both land, one after the other.
 */
import type { PgDatabase } from "../../store/postgres/pg-database.js";
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
} from "../core-rules.js";
import { agentKey } from "../rows.js";
import type { CoreBlock, CoreEditResult, MemoryScope } from "../types.js";

// The first key of the advisory locks core memory edits take (the second is the user's hash).
const CORE_LOCK = 741_203;

// Labels and agent ids in byte order, as SQLite sorts them, whatever the database's collation.
const SCOPED = `SELECT agent_id, label, value, char_limit, updated_at FROM core_memory
  WHERE user_id = $1 AND agent_id IN ('', $2) ORDER BY label COLLATE "C", agent_id COLLATE "C"`;

export class PgCoreMemory implements CoreMemory {
  private readonly defaultLimit: number;
  private readonly now: () => number;

  constructor(
    private readonly db: PgDatabase,
    options: { defaultLimit?: number; now?: () => number } = {},
  ) {
    this.defaultLimit = options.defaultLimit ?? DEFAULT_CORE_LIMIT;
    this.now = options.now ?? Date.now;
  }

  async blocks(scope: MemoryScope): Promise<CoreBlock[]> {
    return scopedBlocks(await this.db.many<CoreRow>(SCOPED, [scope.userId, agentKey(scope.agentId)]));
  }

  async all(userId: string): Promise<CoreBlock[]> {
    const rows = await this.db.many<CoreRow>(
      `SELECT agent_id, label, value, char_limit, updated_at FROM core_memory
       WHERE user_id = $1 ORDER BY label COLLATE "C", agent_id COLLATE "C"`,
      [userId],
    );
    return rows.map(toBlock);
  }

  async remove(scope: MemoryScope, rawLabel: string): Promise<boolean> {
    const n = await this.db.run(
      "DELETE FROM core_memory WHERE user_id = $1 AND agent_id = $2 AND label = $3",
      [scope.userId, agentKey(scope.agentId), normalizeLabel(rawLabel)],
    );
    return n > 0;
  }

  async edit(scope: MemoryScope, rawLabel: string, edit: CoreEdit): Promise<CoreEditResult> {
    return this.db.transaction(async (tx) => {
      await tx.run("SELECT pg_advisory_xact_lock($1::int, hashtext($2))", [CORE_LOCK, scope.userId]);
      const rows = await tx.many<CoreRow>(SCOPED, [scope.userId, agentKey(scope.agentId)]);
      const plan = planCoreEdit(scope, rawLabel, edit, rows, this.defaultLimit, this.now());
      if (plan.ok) {
        const row = plan.row;
        await tx.run(
          `INSERT INTO core_memory (user_id, agent_id, label, value, char_limit, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (user_id, agent_id, label) DO UPDATE SET value = excluded.value,
             char_limit = excluded.char_limit, updated_at = excluded.updated_at`,
          [scope.userId, row.agent_id, row.label, row.value, row.char_limit, row.updated_at],
        );
      }
      return editResult(plan);
    });
  }
}
