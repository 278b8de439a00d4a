/** Turns failures inside built-in tools into error results the model can read and act on. */
import { DimsumError, toDimsumError } from "../../errors.js";
import type { ToolResult } from "../types.js";

/** A failure raised by a built-in tool: the message names the cause, the hint says what to try. */
export function toolFailure(message: string, hint?: string): DimsumError {
  return new DimsumError("tool_failed", message, hint === undefined ? {} : { hint });
}

/** An `isError` result carrying the error's message and hint, never a stack trace. */
export function errorResult(err: unknown, data?: unknown): ToolResult {
  const error = toDimsumError(err, "tool_failed");
  const result: ToolResult = { content: error.toLine(), isError: true };
  if (data !== undefined) result.data = data;
  return result;
}

/** The `code` of a Node.js system error (ENOENT, EACCES...), if it has one. */
export function errnoCode(err: unknown): string | undefined {
  if (typeof err === "object" && err !== null && "code" in err) {
    const code = (err as { code: unknown }).code;
    return typeof code === "string" ? code : undefined;
  }
  return undefined;
}
