/**
 * The knowledge base over PostgreSQL, for servers that share one database (DIMSUM_DATABASE_URL):
 * `createPostgresKnowledgeService(db, options)` is the counterpart of `KnowledgeService.sqlite(db)`.
 */
import type { PgDatabase } from "../store/postgres/pg-database.js";
import { KnowledgeService, type KnowledgeServiceOptions } from "./knowledge-service.js";
import { createPostgresKnowledgeRepository } from "./store/pg-knowledge-repository.js";

/** The knowledge service over a migrated PostgreSQL database; the caller keeps and closes `db`. */
export function createPostgresKnowledgeService(
  db: PgDatabase,
  options: KnowledgeServiceOptions = {},
): KnowledgeService {
  const repoOptions: { now?: () => number; maxPostings?: number } = {};
  if (options.now) repoOptions.now = options.now;
  if (options.maxPostings !== undefined) repoOptions.maxPostings = options.maxPostings;
  return new KnowledgeService(createPostgresKnowledgeRepository(db, repoOptions), options);
}
