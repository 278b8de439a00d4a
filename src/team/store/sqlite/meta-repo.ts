/** Small key-value facts about the team (e.g. whether the starter agents were created). */
import type { Database, Statement } from "better-sqlite3";
import type { MetaRepository } from "../repositories.js";
import { guard } from "./sql-guard.js";

/** The team_meta table. */
export class SqliteMetaRepo implements MetaRepository {
  readonly #db: Database;
  readonly #get: Statement<[string], string>;
  readonly #set: Statement<[string, string]>;
  readonly #claim: Statement<[string, string]>;

  constructor(db: Database) {
    this.#db = db;
    this.#get = db.prepare<[string], string>("SELECT value FROM team_meta WHERE key = ?").pluck();
    this.#claim = db.prepare("INSERT INTO team_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING");
    this.#set = db.prepare(
      "INSERT INTO team_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    );
  }

  get(key: string): Promise<string | undefined> {
    return guard(this.#db, "read team settings from", () => this.#get.get(key));
  }

  set(key: string, value: string): Promise<void> {
    return guard(this.#db, "save team settings in", () => {
      this.#set.run(key, value);
    });
  }

  claim(key: string, value: string): Promise<boolean> {
    return guard(this.#db, "save team settings in", () => this.#claim.run(key, value).changes > 0);
  }
}
