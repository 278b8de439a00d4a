/** An agent's sandbox network (the same column as SQLite's migration 24; NULL: the server's setting). */
import { sqlMigration } from "../pg-migrations.js";

export const agentNetwork = sqlMigration(19, "an agent's sandbox network", [
  "ALTER TABLE team_agents ADD COLUMN IF NOT EXISTS network_json TEXT",
]);
