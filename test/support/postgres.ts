/**
 * PostgreSQL for tests: each test file gets a database of its own, created on the server at
 * DIMSUM_TEST_POSTGRES_URL (default the loopback server with trust auth) and dropped afterwards.
 * Without a reachable server the PostgreSQL suites are skipped, with a line saying how to run them;
 * with CI set, an unreachable server fails the run instead.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { openPostgres, type PgDatabase } from "../../src/store/postgres/pg-database.js";

export const POSTGRES_URL =
  process.env.DIMSUM_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

async function reachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Whether the PostgreSQL suites run here (throws under CI when the server is unreachable). */
export const postgresAvailable: boolean = await reachable().then((ok) => {
  if (ok) return true;
  if (process.env.CI) {
    throw new Error(`PostgreSQL is unreachable at ${POSTGRES_URL}; CI needs it for the PostgreSQL suites`);
  }
  console.warn(
    `Skipping the PostgreSQL suites: no server at ${POSTGRES_URL}. Start PostgreSQL 15+ on 127.0.0.1:5432 (trust auth) or set DIMSUM_TEST_POSTGRES_URL to run them.`,
  );
  return false;
});

async function admin<T>(body: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end();
  }
}

/** A new, empty database on the test server; `drop()` removes it. */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `dimsum_test_${process.pid}_${randomBytes(4).toString("hex")}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/** A migrated Dimsum database in a new test database; closing it drops the database. */
export async function openTestPostgres(): Promise<PgDatabase & { dispose(): Promise<void> }> {
  const created = await createTestDatabase();
  const db = await openPostgres(created.url);
  return Object.assign(db, {
    async dispose() {
      await db.close();
      await created.drop();
    },
  });
}
