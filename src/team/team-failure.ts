/**
 * Errors of the team domain. `DimsumError.code` is typed to the runtime's codes, so denials and
 * conflicts use this sibling class carrying a `TeamError["code"]`; the edge maps codes to HTTP status.
 */
import type { TeamError } from "./types.js";

export type TeamErrorCode = TeamError["code"];

const STATUS: Partial<Record<TeamErrorCode, number>> = {
  invalid: 400,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
};

/** A refused or impossible team operation; `message` names the cause, `hint` what to do. */
export class TeamFailure extends Error {
  readonly code: TeamErrorCode;
  readonly hint: string | undefined;
  /** The HTTP status the edge should answer with. */
  readonly status: number;

  constructor(code: TeamErrorCode, message: string, hint?: string) {
    super(message);
    this.name = "TeamFailure";
    this.code = code;
    this.hint = hint;
    this.status = STATUS[code] ?? 500;
  }

  /** One line: the cause, then what to do about it. */
  toLine(): string {
    return this.hint ? `${this.message} (${this.hint})` : this.message;
  }

  /** The JSON shape the edge sends. */
  toJSON(): TeamError {
    return { code: this.code, message: this.toLine() };
  }
}

/** True for TeamFailure values (also across module copies, by name and code). */
export function isTeamFailure(err: unknown): err is TeamFailure {
  return err instanceof TeamFailure || (err instanceof Error && err.name === "TeamFailure" && "code" in err);
}

/** The actor may not do this. */
export function forbidden(message: string, hint?: string): TeamFailure {
  return new TeamFailure("forbidden", message, hint);
}

/** The thing asked for does not exist. */
export function notFound(message: string, hint?: string): TeamFailure {
  return new TeamFailure("not_found", message, hint);
}

/** The request clashes with the current state (duplicate id, flow in the wrong state). */
export function conflict(message: string, hint?: string): TeamFailure {
  return new TeamFailure("conflict", message, hint);
}

/** The input is wrong. */
export function invalid(message: string, hint?: string): TeamFailure {
  return new TeamFailure("invalid", message, hint);
}
