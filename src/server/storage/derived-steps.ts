/**
 * What `dimsum migrate` rebuilds in PostgreSQL after copying the rows, domain by domain: data
 * PostgreSQL derives from the rows (search vectors and indexes) and data kept in files on one machine.
 */
import { knowledgeTermsStep } from "../../knowledge/index.js";
import { memoryTermsStep } from "../../memory/postgres/derived.js";
import type { DerivedStep } from "../../store/postgres/copy-from-sqlite.js";
import { messageSearchStep, personaFilesStep } from "../../team/store/postgres/derived.js";

export function postgresDerivedSteps(home: string): DerivedStep[] {
  return [messageSearchStep, personaFilesStep(home), memoryTermsStep, knowledgeTermsStep];
}
