/** Connectors of type `dingtalk` and `wecom`: the type check of migration 5 widened (after 8, the answer format). */
import type { PgMigration } from "../pg-migrations.js";

export const connectorTypes: PgMigration = {
  version: 9,
  name: "connectors of type dingtalk and wecom",
  async up(tx) {
    // Found by its definition, whatever it was named (by default `connectors_type_check`).
    const checks = await tx.many<{ name: string }>(
      `SELECT conname AS name FROM pg_constraint
       WHERE conrelid = 'connectors'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%feishu%'`,
    );
    for (const { name } of checks) {
      await tx.run(`ALTER TABLE connectors DROP CONSTRAINT "${name.replaceAll('"', '""')}"`);
    }
    await tx.run(
      "ALTER TABLE connectors ADD CONSTRAINT connectors_type_check CHECK (type IN ('telegram', 'webhook', 'feishu', 'dingtalk', 'wecom'))",
    );
  },
};
