/** How the commands end on an error, and the action-word check of `kb`, `memory` and `schedule`. */
import { type DimsumError, type ErrorCode, toDimsumError } from "../errors.js";
import type { TextOut } from "./command-io.js";
import { EXIT_USAGE, exitCodeFor } from "./exit-codes.js";

/** `action` when it is one of `actions`; else the command's usage error listing them. */
export function checkAction<A extends string>(
  command: string,
  actions: readonly A[],
  action: string,
  usage: (message: string) => DimsumError,
): A {
  if (!(actions as readonly string[]).includes(action)) {
    throw usage(`unknown ${command} action "${action}"; use ${actions.join(", ")}`);
  }
  return action as A;
}

/** Prints a failed action's error on stderr and returns its exit code: a usage error (hint "usage: …") exits 2. */
export function reportActionError(err: unknown, stderr: TextOut): number {
  const error = toDimsumError(err);
  stderr.write(`error: ${error.toLine()}\n`);
  return error.hint?.startsWith("usage:") ? EXIT_USAGE : exitCodeFor(error.code);
}

/** Prints a failed command's error on stderr as `dimsum: …` and returns the exit code of its error code. */
export function reportCommandError(err: unknown, stderr: TextOut, fallback?: ErrorCode): number {
  const error = toDimsumError(err, fallback);
  stderr.write(`dimsum: ${error.toLine()}\n`);
  return exitCodeFor(error.code);
}
