/** Shared helpers of the team repositories: error mapping and JSON columns. */
import type { Database } from "better-sqlite3";
import { joinGroupCommit } from "../../store/group-commit.js";
import { storeError } from "../../store/sqlite-errors.js";

/** Runs a statement, turning SQLite failures into DimsumErrors naming the database file. */
export function guard<T>(db: Database, action: string, body: () => T): Promise<T> {
  try {
    joinGroupCommit(db);
    return Promise.resolve(body());
  } catch (err) {
    return Promise.reject(storeError(err, db.name, action));
  }
}

/** Parses a JSON column written by these repositories; a damaged value falls back. */
export function parseJson<T>(text: string | null | undefined, fallback: T): T {
  if (text === null || text === undefined) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}
