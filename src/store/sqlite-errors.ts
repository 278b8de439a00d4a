/** Turns SQLite failures into DimsumErrors that name the database file and say what to do. */
import { DimsumError } from "../errors.js";

const homeHint = "set DIMSUM_HOME to a writable folder, or fix the permissions of this one";

/** The SQLite result code of a better-sqlite3 error (`SQLITE_BUSY`, ...), if it is one. */
export function sqliteCode(err: unknown): string | undefined {
  if (
    err instanceof Error &&
    "code" in err &&
    typeof err.code === "string" &&
    err.code.startsWith("SQLITE_")
  ) {
    return err.code;
  }
  return undefined;
}

/** Node's fs error code (`EACCES`, ...), if it is one. */
function fsCode(err: unknown): string | undefined {
  if (err instanceof Error && "code" in err && typeof err.code === "string" && /^E[A-Z]+$/.test(err.code)) {
    return err.code;
  }
  return undefined;
}

/**
 * Maps an error raised while `action` (e.g. "open", "write to") the database at `file`.
 * Problems the user can fix become `config` errors; anything else stays `internal`.
 */
export function storeError(err: unknown, file: string, action: string): DimsumError {
  if (err instanceof DimsumError) return err;
  const detail = err instanceof Error ? err.message : String(err);
  const code = sqliteCode(err) ?? fsCode(err) ?? "";
  const where = `the Dimsum database at ${file}`;
  if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) {
    return new DimsumError(
      "config",
      `Could not ${action} ${where}: it is locked by another process (${detail}).`,
      {
        hint: "close the other Dimsum process using it, or point DIMSUM_HOME at another folder",
        retryable: true,
        cause: err,
      },
    );
  }
  if (
    code.startsWith("SQLITE_CANTOPEN") ||
    code.startsWith("SQLITE_READONLY") ||
    code.startsWith("SQLITE_PERM") ||
    code.startsWith("SQLITE_AUTH") ||
    ["EACCES", "EPERM", "EROFS", "ENOTDIR", "EEXIST", "ENOENT"].includes(code)
  ) {
    return new DimsumError("config", `Could not ${action} ${where}: it is not writable (${detail}).`, {
      hint: homeHint,
      cause: err,
    });
  }
  if (code.startsWith("SQLITE_FULL") || code === "ENOSPC") {
    return new DimsumError("config", `Could not ${action} ${where}: the disk is full (${detail}).`, {
      hint: "free some disk space, or point DIMSUM_HOME at another disk",
      cause: err,
    });
  }
  if (code.startsWith("SQLITE_NOTADB") || code.startsWith("SQLITE_CORRUPT")) {
    return new DimsumError(
      "config",
      `Could not ${action} ${where}: the file is not a healthy SQLite database (${detail}).`,
      {
        hint: "restore it from a backup or move it away so Dimsum starts a new one; DIMSUM_HOME chooses the folder",
        cause: err,
      },
    );
  }
  return new DimsumError("internal", `Could not ${action} ${where}: ${detail}`, { cause: err });
}
