/**
 * `dimsum audit verify`: checks the audit log's hash chain in this home's database (or
 * DIMSUM_DATABASE_URL's), reporting every entry edited, deleted or relinked. Exit code 1 when the
 * chain does not hold, so a cron job or monitor can alert on it.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../config/load-config.js";
import { DimsumError } from "../../errors.js";
import { AuditLog, type AuditVerification } from "../../store/audit/audit-log.js";
import { openDatabase } from "../../store/database.js";
import { openPostgres, redactUrl } from "../../store/postgres/pg-database.js";
import { postgresDatabase, sqliteDatabase } from "../../store/sql-database.js";
import { reportCommandError } from "../command-errors.js";
import type { CommandIo } from "../command-io.js";
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from "../exit-codes.js";

export type AuditIo = CommandIo;

async function verifyStored(io: AuditIo): Promise<{ where: string; result: AuditVerification }> {
  const config = loadConfig({ cwd: io.cwd, env: io.env });
  const url = config.server.databaseUrl;
  if (url !== undefined) {
    const db = await openPostgres(url);
    try {
      return { where: redactUrl(url), result: await new AuditLog(postgresDatabase(db)).verify() };
    } finally {
      await db.close();
    }
  }
  const file = join(config.home, "dimsum.db");
  if (!existsSync(file)) {
    throw new DimsumError("config", `there is no database at ${file}`, {
      hint: "set DIMSUM_HOME to the server's home folder, or DIMSUM_DATABASE_URL to its PostgreSQL database",
    });
  }
  const db = openDatabase(file);
  try {
    return { where: file, result: await new AuditLog(sqliteDatabase(db)).verify() };
  } finally {
    db.close();
  }
}

/** `dimsum audit <action>`; only `verify` for now. */
export async function auditCommand(
  action: string,
  options: { json?: boolean },
  io: AuditIo,
): Promise<number> {
  if (action !== "verify") {
    io.stderr.write(`dimsum: unknown audit action "${action}" (try: dimsum audit verify)\n`);
    return EXIT_USAGE;
  }
  try {
    const { where, result } = await verifyStored(io);
    if (options.json) io.stdout.write(`${JSON.stringify({ database: where, ...result })}\n`);
    else if (result.ok) {
      const pruned =
        result.prunedThrough > 0 ? ` (entries up to ${result.prunedThrough} removed by retention)` : "";
      io.stdout.write(`The audit log in ${where} holds: ${result.checked} entries verified${pruned}.\n`);
    } else {
      io.stdout.write(`The audit log in ${where} was tampered with:\n`);
      for (const problem of result.problems) io.stdout.write(`  ${problem.message}\n`);
      io.stdout.write(`${result.checked} entries checked.\n`);
    }
    return result.ok ? EXIT_OK : EXIT_FAILURE;
  } catch (err) {
    return reportCommandError(err, io.stderr);
  }
}
