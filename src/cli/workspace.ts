import { realpathSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { DimsumError } from "../errors.js";

/** The workspace as an absolute real path; it must exist and be a directory. */
export function resolveWorkspace(cwd: string, dir: string | undefined): string {
  const path = resolve(cwd, dir ?? ".");
  try {
    if (!statSync(path).isDirectory()) throw new Error("not a directory");
    return realpathSync(path);
  } catch (err) {
    throw new DimsumError(
      "config",
      `workspace ${path} is not a usable directory: ${(err as Error).message}`,
      {
        hint: "pass --workspace with an existing folder",
      },
    );
  }
}
