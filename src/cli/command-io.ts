/** What the commands read and write: the shapes `main.ts` builds, and the narrower ones tests pass. */
import type { EnvMap } from "../shared/env-map.js";
import type { OutputGuard } from "./stop-signals.js";

/** Somewhere a command writes text: a process stream, or a test's buffer. */
export interface TextOut {
  write(text: string): unknown;
}

/** What a command that prints and reads its home needs: two outputs, the environment and the folder it runs in. */
export interface CommandIo {
  stdout: TextOut;
  stderr: TextOut;
  env: EnvMap;
  cwd: string;
}

/** The process's own streams, as `main.ts` gives them to every command. */
export interface CliIo extends CommandIo {
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  /** Set by main(): tells when a reader closed stdout or stderr (EPIPE). */
  output?: OutputGuard;
}
