/** Process exit codes, one per kind of failure so scripts can tell them apart. */
import type { ErrorCode } from "../errors.js";

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
export const EXIT_CONFIG = 3;
export const EXIT_PROVIDER = 4;
/** Stopped by Ctrl-C (SIGINT): 128 + 2, what a shell reports for a process killed by SIGINT. */
export const EXIT_ABORTED = 130;
/** Stopped because the reader closed stdout (EPIPE): 128 + 13, as for a process killed by SIGPIPE. */
export const EXIT_PIPE = 141;
/** Stopped by SIGTERM after cleaning up: 128 + 15. */
export const EXIT_TERMINATED = 143;

/** The exit code for an error code. */
export function exitCodeFor(code: ErrorCode): number {
  switch (code) {
    case "config":
      return EXIT_CONFIG;
    case "auth":
    case "rate_limit":
    case "provider_unavailable":
    case "bad_request":
    case "timeout":
      return EXIT_PROVIDER;
    case "aborted":
      return EXIT_ABORTED;
    default:
      return EXIT_FAILURE;
  }
}
