/** The A2A server's tasks: the columns `@a2a-js/sdk`'s DatabaseTaskStore reads and writes. */
import { sqlMigration } from "../pg-migrations.js";

export const a2aTasks = sqlMigration(13, "the A2A server's tasks", [
  `CREATE TABLE a2a_tasks (
    tenant VARCHAR(255) COLLATE "C" NOT NULL,
    owner VARCHAR(255) COLLATE "C" NOT NULL,
    id VARCHAR(255) COLLATE "C" NOT NULL,
    context_id VARCHAR(255) COLLATE "C" NOT NULL,
    status_last_updated BIGINT NOT NULL,
    status_state VARCHAR(255) COLLATE "C",
    status TEXT,
    artifacts TEXT,
    history TEXT,
    metadata TEXT,
    protocol_version VARCHAR(255),
    PRIMARY KEY (tenant, owner, id)
  )`,
  "CREATE INDEX a2a_tasks_scope_updated ON a2a_tasks (tenant, owner, status_last_updated, id)",
  "CREATE INDEX a2a_tasks_scope_context_updated ON a2a_tasks (tenant, owner, context_id, status_last_updated, id)",
]);
