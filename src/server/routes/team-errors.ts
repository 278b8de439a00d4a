/**
 * How the team routes answer errors: known DimsumErrors as JSON with the status of their code (the
 * one map in `http/errors.ts`), anything else logged and answered 500.
 */
import type { ErrorHandler } from "hono";
import type { AppEnv } from "../context.js";
import { errorResponse, internalError, toApiError } from "../http/errors.js";

/** The error handler of the team routes. */
export const teamErrorHandler: ErrorHandler<AppEnv> = (err, c) => {
  const known = toApiError(err);
  if (known) return errorResponse(c, known);
  c.get("services").log.error(`${c.req.method} ${c.req.path} failed`, err);
  return errorResponse(c, internalError());
};
