/** The team repositories over PostgreSQL: the shared ones, and the leases and jobs of several instances. */

import type { PgDatabase } from "../../../store/postgres/pg-database.js";
import { postgresDatabase } from "../../../store/sql-database.js";
import type { TeamStore } from "../repositories.js";
import { teamRepositories } from "../team-repositories.js";
import { PgRunJobRepo } from "./job-repo.js";
import { PgRunLeaseRepo } from "./lease-repo.js";

export function createPostgresTeamStore(db: PgDatabase): TeamStore {
  return {
    ...teamRepositories(postgresDatabase(db)),
    leases: new PgRunLeaseRepo(db),
    jobs: new PgRunJobRepo(db),
  };
}
