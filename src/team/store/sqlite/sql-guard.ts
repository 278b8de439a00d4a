/** Shared helpers of the team repositories: error mapping and JSON columns. */
import type { Database } from "better-sqlite3";
import { joinGroupCommit } from "../../../store/group-commit.js";
import { storeError } from "../../../store/sqlite-errors.js";

/** Runs a statement, turning SQLite failures into DimsumErrors naming the database file. */
export function guard<T>(db: Database, action: string, body: () => T): Promise<T> {
  try {
    joinGroupCommit(db);
    return Promise.resolve(body());
  } catch (err) {
    return Promise.reject(storeError(err, db.name, action));
  }
}
