// Where the team's shared datasets live: `../shared` beside the project, or DIMSUM_SHARED_DIR.
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The folder holding `datasets/` and `fixtures/`. */
export function sharedDir() {
  const candidates = [process.env.DIMSUM_SHARED_DIR, resolve(root, "../shared"), "/work/shared"];
  for (const dir of candidates) if (dir && existsSync(join(dir, "datasets"))) return dir;
  throw new Error("shared datasets not found: set DIMSUM_SHARED_DIR to the folder holding datasets/");
}
