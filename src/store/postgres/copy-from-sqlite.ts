/**
 * Copies a Dimsum home's SQLite database into PostgreSQL (`dimsum migrate --to postgres://…`), so a
 * team moves to several instances without losing history. Every table both schemas have is copied
 * in foreign-key order, in batches, with `ON CONFLICT DO NOTHING`, so a second run adds only what is
 * missing; sequences continue after the copied ids; then what PostgreSQL derives from the rows (search
 * vectors, personas from SOUL.md files) is rebuilt, and every table's count is compared.
 */
import type { Database } from "better-sqlite3";
import { DimsumError } from "../../errors.js";
import type { PgDatabase, PgQueryable } from "./pg-database.js";

export interface CopyProgress {
  table: string;
  copied: number;
  total: number;
}

/** Work after the rows are in: derived columns and data kept outside the database file. */
export interface DerivedStep {
  name: string;
  /** Tables this step computes from the others: not copied (their SQLite form differs). */
  rebuilds?: readonly string[];
  run(target: PgDatabase, onProgress: (done: number, total: number) => void): Promise<void>;
}

export interface CopyReport {
  tables: Array<{ table: string; source: number; target: number }>;
  /** Tables only SQLite has (its search indexes), not copied; the derived steps rebuild what they held. */
  skipped: string[];
}

interface Column {
  name: string;
  type: string;
}

async function pgColumns(db: PgQueryable, table: string): Promise<Column[]> {
  return db.many<Column>(
    `SELECT column_name AS name, data_type AS type FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`,
    [table],
  );
}

/** PostgreSQL tables, parents before children (by their foreign keys). */
async function tablesInOrder(db: PgQueryable): Promise<string[]> {
  const tables = (
    await db.many<{ name: string }>(
      "SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename",
    )
  ).map((t) => t.name);
  const edges = await db.many<{ child: string; parent: string }>(
    `SELECT tc.table_name AS child, ccu.table_name AS parent FROM information_schema.table_constraints tc
     JOIN information_schema.constraint_column_usage ccu ON ccu.constraint_name = tc.constraint_name
       AND ccu.table_schema = tc.table_schema
     WHERE tc.constraint_type = 'FOREIGN KEY' AND tc.table_schema = current_schema()`,
  );
  const ordered: string[] = [];
  const visiting = new Set<string>();
  const visit = (table: string) => {
    if (ordered.includes(table) || visiting.has(table)) return;
    visiting.add(table);
    for (const e of edges) if (e.child === table && e.parent !== table) visit(e.parent);
    visiting.delete(table);
    ordered.push(table);
  };
  for (const table of tables) visit(table);
  return ordered;
}

function sqliteTables(source: Database): Set<string> {
  const rows = source
    .prepare<[], { name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND sql NOT LIKE 'CREATE VIRTUAL%'",
    )
    .all();
  return new Set(rows.map((r) => r.name));
}

function convert(value: unknown, column: Column): unknown {
  if (value === null || value === undefined) return null;
  if (column.type === "boolean" && typeof value === "number") return value !== 0;
  if (typeof value === "bigint") return value.toString();
  return value;
}

async function copyTable(
  source: Database,
  target: PgDatabase,
  table: string,
  onProgress: (progress: CopyProgress) => void,
): Promise<void> {
  const sqliteNames = new Set(
    source
      .prepare<[], { name: string }>(`SELECT name FROM pragma_table_info('${table.replaceAll("'", "''")}')`)
      .all()
      .map((c) => c.name),
  );
  const columns = (await pgColumns(target, table)).filter((c) => sqliteNames.has(c.name));
  if (columns.length === 0) return;
  const total = (source.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n;
  const list = columns.map((c) => `"${c.name}"`).join(", ");
  const perBatch = Math.max(1, Math.min(1000, Math.floor(30_000 / columns.length)));
  const rows = source.prepare(`SELECT ${list} FROM "${table}"`).raw(true).iterate() as IterableIterator<
    unknown[]
  >;
  let batch: unknown[][] = [];
  let copied = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    const values: unknown[] = [];
    const tuples = batch.map((row) => {
      const marks = row.map((value, i) => {
        values.push(convert(value, columns[i] as Column));
        return `$${values.length}`;
      });
      return `(${marks.join(", ")})`;
    });
    await target.run(
      `INSERT INTO "${table}" (${list}) VALUES ${tuples.join(", ")} ON CONFLICT DO NOTHING`,
      values,
    );
    copied += batch.length;
    batch = [];
    onProgress({ table, copied, total });
  };
  for (const row of rows) {
    batch.push(row);
    if (batch.length >= perBatch) await flush();
  }
  await flush();
  if (total === 0) onProgress({ table, copied: 0, total });
}

/** Moves every sequence past the ids copied into its table. */
async function resetSequences(target: PgDatabase): Promise<void> {
  const serials = await target.many<{ table: string; column: string }>(
    `SELECT table_name AS table, column_name AS column FROM information_schema.columns
     WHERE table_schema = current_schema() AND column_default LIKE 'nextval(%'`,
  );
  for (const { table, column } of serials) {
    await target.run(
      `SELECT setval(pg_get_serial_sequence('"${table}"', '${column}'),
         greatest((SELECT coalesce(max("${column}"), 0) FROM "${table}"), 1),
         (SELECT count(*) > 0 FROM "${table}"))`,
    );
  }
}

/**
 * Copies `source` (a migrated Dimsum SQLite database) into `target` (a migrated PostgreSQL one).
 * Throws a DimsumError when a count differs afterwards (the target held other data).
 */
export async function copyFromSqlite(
  source: Database,
  target: PgDatabase,
  steps: readonly DerivedStep[],
  onProgress: (progress: CopyProgress | { step: string; done: number; total: number }) => void = () =>
    undefined,
): Promise<CopyReport> {
  const inSqlite = sqliteTables(source);
  const rebuilt = new Set(steps.flatMap((s) => s.rebuilds ?? []));
  const order = (await tablesInOrder(target)).filter(
    (t) => inSqlite.has(t) && t !== "dimsum_schema_migrations" && !rebuilt.has(t),
  );
  for (const table of order) await copyTable(source, target, table, onProgress);
  await resetSequences(target);
  for (const step of steps) {
    await step.run(target, (done, total) => onProgress({ step: step.name, done, total }));
  }
  const tables: CopyReport["tables"] = [];
  for (const table of order) {
    const sourceCount = (source.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n;
    const row = await target.one<{ n: number }>(`SELECT count(*)::int AS n FROM "${table}"`);
    tables.push({ table, source: sourceCount, target: row?.n ?? 0 });
  }
  const different = tables.filter((t) => t.source !== t.target);
  if (different.length > 0) {
    throw new DimsumError(
      "config",
      `The copy is incomplete or the target held other data: ${different
        .map((t) => `${t.table} ${t.source} in SQLite, ${t.target} in PostgreSQL`)
        .join("; ")}.`,
      { hint: "migrate into an empty database (or one only earlier runs of dimsum migrate wrote to)" },
    );
  }
  const copied = new Set(order);
  const skipped = [...inSqlite]
    .filter((t) => !copied.has(t) && !rebuilt.has(t) && t !== "schema_migrations")
    .sort();
  return { tables, skipped };
}
