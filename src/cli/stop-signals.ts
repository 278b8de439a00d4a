/**
 * How a command is told to stop: Ctrl-C (SIGINT), SIGTERM, or a reader that closed our stdout
 * (EPIPE, e.g. `dimsum runs --json | head -1`). Each ends the command the same clean way: abort the
 * run, end tool processes, close the database, then exit with the code for the reason.
 */
import { EXIT_ABORTED, EXIT_PIPE, EXIT_TERMINATED } from "./exit-codes.js";

export type StopReason = "SIGINT" | "SIGTERM" | "EPIPE";

const EXIT_CODES: Readonly<Record<StopReason, number>> = {
  SIGINT: EXIT_ABORTED,
  SIGTERM: EXIT_TERMINATED,
  EPIPE: EXIT_PIPE,
};

/** The exit code after stopping for `reason`: 130, 143 or 141, as a shell reports a process killed by that signal. */
export function exitCodeForStop(reason: StopReason): number {
  return EXIT_CODES[reason];
}

export interface OutputGuard {
  /** True once a reader closed one of the streams. */
  readonly closed: boolean;
  /** Calls `listener` (once) when a reader closes a stream. */
  onClose(listener: () => void): void;
}

/**
 * Keeps a closed stdout or stderr from crashing the process with an unhandled `error` event: the
 * first EPIPE is remembered and reported to listeners, later writes are dropped quietly.
 */
export function guardOutput(...streams: NodeJS.WritableStream[]): OutputGuard {
  let closed = false;
  const listeners: Array<() => void> = [];
  // Any write error (EPIPE above all) means nobody reads this stream any more: stop, quietly.
  const onError = () => {
    if (closed) return;
    closed = true;
    for (const listener of listeners.splice(0)) listener();
  };
  for (const stream of streams) stream.on("error", onError);
  return {
    get closed() {
      return closed;
    },
    onClose(listener) {
      if (closed) listener();
      else listeners.push(listener);
    },
  };
}

export interface CommandStop {
  readonly signal: AbortSignal;
  /** Why the command was stopped, if it was. */
  readonly reason: StopReason | undefined;
  /** Removes the signal handlers. */
  dispose(): void;
}

/** A guard for commands that do not stop on a closed stdout: it never reports one. */
const NEVER_CLOSED: OutputGuard = { closed: false, onClose() {} };

/**
 * Aborts `signal` on SIGINT, SIGTERM or (given a guard) a closed stdout. A second SIGINT or SIGTERM
 * while the clean-up runs exits at once with that signal's code.
 */
export function watchStop(output: OutputGuard = NEVER_CLOSED): CommandStop {
  const controller = new AbortController();
  let reason: StopReason | undefined;
  const stop = (why: StopReason) => {
    if (controller.signal.aborted) {
      if (why !== "EPIPE") process.exit(exitCodeForStop(why));
      return;
    }
    reason = why;
    controller.abort();
  };
  const onInt = () => stop("SIGINT");
  const onTerm = () => stop("SIGTERM");
  process.on("SIGINT", onInt);
  process.on("SIGTERM", onTerm);
  output.onClose(() => stop("EPIPE"));
  return {
    signal: controller.signal,
    get reason() {
      return reason;
    },
    dispose() {
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
    },
  };
}
