/** Small key-value facts about the team (e.g. whether the starter agents were created). */
import { type SqlDatabase, sql } from "../../store/sql-database.js";
import type { MetaRepository } from "./repositories.js";

const SQL = {
  get: sql("SELECT value FROM team_meta WHERE key = ?"),
  set: sql(
    "INSERT INTO team_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
  ),
  claim: sql("INSERT INTO team_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING"),
} as const;

/** The team_meta table. */
export class MetaRepo implements MetaRepository {
  constructor(private readonly db: SqlDatabase) {}

  async get(key: string): Promise<string | undefined> {
    return (await this.db.one<{ value: string }>("read team settings from", SQL.get, [key]))?.value;
  }

  async set(key: string, value: string): Promise<void> {
    await this.db.run("save team settings in", SQL.set, [key, value]);
  }

  async claim(key: string, value: string): Promise<boolean> {
    return (await this.db.run("save team settings in", SQL.claim, [key, value])) > 0;
  }
}
