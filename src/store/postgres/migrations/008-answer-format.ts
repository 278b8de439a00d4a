/** An agent's answer format: a JSON Schema its answers follow. */
import type { PgMigration } from "../pg-migrations.js";

export const answerFormat: PgMigration = {
  version: 8,
  name: "an agent's answer format (a JSON Schema its answers follow)",
  async up(tx) {
    await tx.run("ALTER TABLE team_agents ADD COLUMN answer_format_json TEXT");
  },
};
