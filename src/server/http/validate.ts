/** zod-backed Hono validators: bad input becomes a 400 listing each issue as `{path, message}`. */
import type { Context } from "hono";
import { validator } from "hono/validator";
import type { z } from "zod";
import { DimsumError, invalid } from "../../errors.js";
import type { ValidationIssue } from "./errors.js";

/** Flattens zod issues into the contract's `[{path: "a.b", message}]`. */
export function issuesOf(error: z.ZodError): ValidationIssue[] {
  return error.issues.map((issue) => ({ path: issue.path.map(String).join("."), message: issue.message }));
}

/** Parses a value with a schema or throws the contract's 400. */
export function parseOr400<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new DimsumError("invalid", `invalid ${what}`, { issues: issuesOf(result.error) });
  }
  return result.data;
}

function isJson(c: Context): boolean {
  const type = (c.req.header("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  return type === "application/json" || /^application\/[\w.-]+\+json$/.test(type);
}

/**
 * Validates the JSON body; read it in the handler with `c.req.valid("json")`. A body that is not
 * declared as JSON is refused (also keeps HTML forms, which cannot send JSON, out of state changes).
 */
export function jsonBody<S extends z.ZodType>(schema: S) {
  return validator("json", (value, c): z.output<S> => {
    if (!isJson(c)) {
      throw invalid("send a JSON body with Content-Type: application/json");
    }
    return parseOr400(schema, value, "request body");
  });
}

/** Validates the query string (single values as strings, repeated keys as arrays). */
export function queryOf<S extends z.ZodType>(schema: S) {
  return validator("query", (value): z.output<S> => parseOr400(schema, value, "query"));
}

/** Validates path parameters. */
export function paramsOf<S extends z.ZodType>(schema: S) {
  return validator("param", (value): z.output<S> => parseOr400(schema, value, "path"));
}
