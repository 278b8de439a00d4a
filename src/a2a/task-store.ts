/**
 * Where the A2A server keeps its tasks: in the server's database (the SQLite file or PostgreSQL, table
 * `a2a_tasks`), through `@a2a-js/sdk`'s own `DatabaseTaskStore` over Kysely, so a task can be read
 * (`GetTask`, `ListTasks`) after a restart and from any instance. Tasks are scoped to the person and
 * the agent they were sent to. Kysely and the SDK's database module load on the first A2A call, and
 * PostgreSQL gets a pool of its own of at most two connections.
 */
import type { ServerCallContext, TaskStore } from "@a2a-js/sdk/server";
import type { Database } from "better-sqlite3";
import { importExternal } from "../import-external.js";

/** The table, created by SQLite migration 18 and PostgreSQL migration 013. */
export const A2A_TASK_TABLE = "a2a_tasks";

/** The key of the task owner (person and agent) in `ServerCallContext.state`. */
export const TASK_SCOPE = "dimsum.a2a.scope";

/** The owner of the tasks of a call: the person and the agent (one person never sees another's). */
export function taskOwnerOf(context: ServerCallContext): string {
  return String(context.state.get(TASK_SCOPE) ?? "unknown");
}

/** The database the tasks go to. */
export type TaskDatabase = { kind: "sqlite"; db: Database } | { kind: "postgres"; url: string };

type Params<M extends keyof TaskStore> = Parameters<TaskStore[M]>;

/** A TaskStore in the server's database; `close` ends the PostgreSQL pool (the SQLite file is the server's). */
export class DatabaseA2aTaskStore implements TaskStore {
  readonly #database: TaskDatabase;
  #opened: Promise<{ store: TaskStore; close: () => Promise<void> }> | undefined;

  constructor(database: TaskDatabase) {
    this.#database = database;
  }

  async save(...args: Params<"save">): ReturnType<TaskStore["save"]> {
    return (await this.#store()).save(...args);
  }

  async load(...args: Params<"load">): ReturnType<TaskStore["load"]> {
    return (await this.#store()).load(...args);
  }

  async list(...args: Params<"list">): ReturnType<TaskStore["list"]> {
    return (await this.#store()).list(...args);
  }

  async close(): Promise<void> {
    const opened = this.#opened;
    this.#opened = undefined;
    if (opened) await (await opened.catch(() => undefined))?.close();
  }

  async #store(): Promise<TaskStore> {
    this.#opened ??= this.#open().catch((err: unknown) => {
      this.#opened = undefined;
      throw err;
    });
    return (await this.#opened).store;
  }

  async #open(): Promise<{ store: TaskStore; close: () => Promise<void> }> {
    // Through importExternal: the bundled CLI cannot `import()` from code V8 loaded from its cache.
    const [{ Kysely, SqliteDialect, PostgresDialect }, { DatabaseTaskStore }] = (await Promise.all([
      importExternal("kysely"),
      importExternal("@a2a-js/sdk/server/database"),
    ])) as [typeof import("kysely"), typeof import("@a2a-js/sdk/server/database")];
    const options = { tableName: A2A_TASK_TABLE, ownerResolver: taskOwnerOf };
    if (this.#database.kind === "sqlite") {
      const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: this.#database.db }) });
      // Kysely's destroy would close the server's own SQLite connection: it is left to the server.
      return { store: new DatabaseTaskStore(db, options), close: async () => undefined };
    }
    const { default: pg } = (await importExternal("pg")) as { default: typeof import("pg") };
    const pool = new pg.Pool({ connectionString: this.#database.url, max: 2 });
    const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
    return { store: new DatabaseTaskStore(db, options), close: () => db.destroy() };
  }
}
