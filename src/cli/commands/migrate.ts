/**
 * `dimsum migrate --to postgres://…`: copies this home's SQLite database (and its SOUL.md personas)
 * into PostgreSQL, for running several instances. Idempotent: a second run adds only what is missing.
 * Stored secrets stay sealed with this home's key, so every instance must use it as DIMSUM_SECRET_KEY.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../config/load-config.js";
import { DimsumError } from "../../errors.js";
import { importLegacySignIns } from "../../server/settings/mcp-credential-store.js";
import { postgresDerivedSteps } from "../../server/storage/derived-steps.js";
import { openDatabase } from "../../store/database.js";
import { copyFromSqlite } from "../../store/postgres/copy-from-sqlite.js";
import { openPostgres, redactUrl } from "../../store/postgres/pg-database.js";
import { reportCommandError } from "../command-errors.js";
import type { CommandIo } from "../command-io.js";
import { EXIT_OK, EXIT_USAGE } from "../exit-codes.js";

export interface MigrateOptions {
  to?: string;
  json?: boolean;
}

export type MigrateIo = CommandIo;

/** Refuses a DIMSUM_SECRET_KEY other than the home's key: the copied secrets could not be opened. */
function checkSecretKey(home: string, given: string | undefined): void {
  const file = join(home, "secret.key");
  if (given === undefined || !existsSync(file)) return;
  if (readFileSync(file, "utf8").trim() !== given) {
    throw new DimsumError(
      "config",
      `DIMSUM_SECRET_KEY differs from the key in ${file}, which sealed the stored secrets`,
      {
        hint: `unset it for the migration, then give every instance the key of ${file} as DIMSUM_SECRET_KEY`,
      },
    );
  }
}

export async function migrateCommand(options: MigrateOptions, io: MigrateIo): Promise<number> {
  const url = options.to ?? io.env.DIMSUM_DATABASE_URL;
  if (!url || !/^postgres(ql)?:\/\//.test(url)) {
    io.stderr.write(
      "dimsum: migrate needs --to postgres://user@host:5432/database (or DIMSUM_DATABASE_URL)\n",
    );
    return EXIT_USAGE;
  }
  let source: ReturnType<typeof openDatabase> | undefined;
  let target: Awaited<ReturnType<typeof openPostgres>> | undefined;
  try {
    const config = loadConfig({ cwd: io.cwd, env: io.env });
    checkSecretKey(config.home, config.server.secretKey);
    const file = join(config.home, "dimsum.db");
    if (!existsSync(file)) {
      throw new DimsumError("config", `there is no database at ${file} to migrate`, {
        hint: "set DIMSUM_HOME to the home folder of the server you are moving",
      });
    }
    source = openDatabase(file);
    // Sign-ins an older version kept as files go into the copy too.
    await importLegacySignIns(source, config.home);
    target = await openPostgres(url);
    io.stderr.write(`Copying ${file} into ${redactUrl(url)}\n`);
    let last = "";
    const report = await copyFromSqlite(source, target, postgresDerivedSteps(config.home), (p) => {
      const name = "table" in p ? p.table : p.step;
      const done = "table" in p ? p.copied : p.done;
      if (name !== last || done === p.total) io.stderr.write(`  ${name}: ${done}/${p.total}\n`);
      last = name;
    });
    if (options.json) io.stdout.write(`${JSON.stringify(report)}\n`);
    else {
      const rows = report.tables.reduce((n, t) => n + t.target, 0);
      io.stdout.write(
        `Migrated ${report.tables.length} tables (${rows} rows); every count matches.\n` +
          `Start each instance with DIMSUM_DATABASE_URL=${redactUrl(url)}, DIMSUM_REDIS_URL and ` +
          `DIMSUM_SECRET_KEY set to the key in ${join(config.home, "secret.key")}.\n`,
      );
    }
    return EXIT_OK;
  } catch (err) {
    return reportCommandError(err, io.stderr);
  } finally {
    source?.close();
    await target?.close();
  }
}
