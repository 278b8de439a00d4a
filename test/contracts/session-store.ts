/** A session store on a contract backend, with every warning it reports collected. */
import { PgSessionStore, type PgSessionStoreOptions } from "../../src/store/postgres/pg-session-store.js";
import { SqliteSessionStore } from "../../src/store/sqlite-session-store.js";
import type { SessionStore } from "../../src/store/types.js";
import type { Backend } from "./backends.js";

export async function newStore(
  open: () => Promise<Backend>,
  options: Omit<PgSessionStoreOptions, "logger"> = {},
): Promise<{ store: SessionStore; backend: Backend; warnings: string[] }> {
  const backend = await open();
  const warnings: string[] = [];
  const logger = { warn: (m: string) => warnings.push(m) };
  const store =
    backend.kind === "sqlite"
      ? new SqliteSessionStore(backend.db, { ...options, logger })
      : new PgSessionStore(backend.db, { ...options, logger });
  return { store, backend, warnings };
}
