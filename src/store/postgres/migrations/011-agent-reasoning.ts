/** An agent's reasoning effort (`off`, `low`, `medium`, `high`; NULL: the model's default). */
import type { PgMigration } from "../pg-migrations.js";

export const agentReasoning: PgMigration = {
  version: 11,
  name: "an agent's reasoning effort",
  async up(tx) {
    await tx.run("ALTER TABLE team_agents ADD COLUMN reasoning TEXT");
  },
};
