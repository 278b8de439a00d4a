/**
 * PostgreSQL for benchmarks: a fresh, migrated database per call on the server at
 * DIMSUM_BENCH_POSTGRES_URL (else DIMSUM_TEST_POSTGRES_URL, else the loopback server with trust auth),
 * dropped by `dispose()`. `postgresReachable()` says whether the PostgreSQL rows can run.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { openPostgres } from "../dist/store/postgres/pg-database.js";

export const BENCH_POSTGRES_URL =
  process.env.DIMSUM_BENCH_POSTGRES_URL ??
  process.env.DIMSUM_TEST_POSTGRES_URL ??
  "postgres://postgres@127.0.0.1:5432/postgres";

async function admin(body) {
  const client = new pg.Client({ connectionString: BENCH_POSTGRES_URL, connectionTimeoutMillis: 2000 });
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end();
  }
}

/** True when the server answers; the benches then add PostgreSQL rows. */
export async function postgresReachable() {
  try {
    await admin((c) => c.query("SELECT 1"));
    return true;
  } catch {
    return false;
  }
}

/** A new, empty database (for servers that migrate it themselves) with `settings`; `drop()` removes it. */
export async function createBenchDatabase({ settings = {} } = {}) {
  const name = `dimsum_bench_${process.pid}_${randomBytes(4).toString("hex")}`;
  await admin(async (c) => {
    await c.query(`CREATE DATABASE ${name}`);
    // Per-database defaults for the sessions the servers open (e.g. synchronous_commit = off).
    for (const [key, value] of Object.entries(settings)) {
      await c.query(`ALTER DATABASE ${name} SET ${key} = ${pg.escapeLiteral(String(value))}`);
    }
  });
  const url = new URL(BENCH_POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)),
  };
}

/** A new migrated database; `dispose()` closes and drops it. */
export async function openBenchPostgres() {
  const { url, drop } = await createBenchDatabase();
  const db = await openPostgres(url);
  return {
    db,
    async dispose() {
      await db.close();
      await drop();
    },
  };
}
