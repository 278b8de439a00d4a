/** Reads the environment once at the edge: process env over an optional `.env` in the working directory. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseEnv } from "node:util";
import { DimsumError } from "../errors.js";

import type { EnvMap } from "../shared/env-map.js";

export type { EnvMap };

/** Merges `<cwd>/.env` (if present) under the given process env; real env vars win. */
export function loadEnv(cwd: string, processEnv: EnvMap): EnvMap {
  const file = join(cwd, ".env");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { ...processEnv };
    throw new DimsumError("config", `cannot read ${file}: ${(err as Error).message}`, {
      hint: "fix the file's permissions or remove it",
    });
  }
  const fromFile = parseEnv(text) as Record<string, string>;
  const merged: Record<string, string | undefined> = { ...fromFile };
  for (const [key, value] of Object.entries(processEnv)) if (value !== undefined) merged[key] = value;
  return merged;
}
