/**
 * How the team routes answer errors: TeamFailure codes become 400/403/404/409 and a configuration
 * problem (no model chosen, unknown provider) 400, each message followed by its hint.
 */
import type { ErrorHandler } from "hono";
import { DimsumError } from "../../errors.js";
import type { AppEnv } from "../context.js";
import { errorResponse, HttpError, toHttpError } from "../http/errors.js";

function hintOf(err: unknown): string | undefined {
  if (!(err instanceof Error) || !("hint" in err)) return undefined;
  return typeof err.hint === "string" && err.hint !== "" ? err.hint : undefined;
}

/** Maps what the team throws to an HttpError; undefined for unexpected errors (bugs). */
export function teamHttpError(err: unknown): HttpError | undefined {
  if (err instanceof HttpError) return err;
  if (err instanceof DimsumError && err.code === "config") {
    return new HttpError(400, "invalid", err.toLine());
  }
  const mapped = toHttpError(err);
  const hint = hintOf(err);
  if (!mapped || !hint || !(err instanceof Error)) return mapped;
  return new HttpError(mapped.status, mapped.code, `${err.message} (${hint})`);
}

/** The error handler of the team routes: known errors as JSON, anything else logged and 500. */
export const teamErrorHandler: ErrorHandler<AppEnv> = (err, c) => {
  const known = teamHttpError(err);
  if (known) return errorResponse(c, known);
  c.get("services").log.error(`${c.req.method} ${c.req.path} failed`, err);
  return errorResponse(c, new HttpError(500, "internal", "internal server error; see the server log"));
};
