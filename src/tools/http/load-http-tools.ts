/**
 * Loads HTTP tool definitions from `tools/http/*.json` folders (shipped, `DIMSUM_HOME`, project) and
 * from definitions passed in (the config's `httpTools`). A bad file is reported with its path and
 * skipped. Later sources win on a name clash, so a project can replace a shipped tool.
 */
import { readdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { EnvMap } from "../../shared/env-map.js";
import type { JsonSchemaTool } from "../types.js";
import { checkHttpToolDefinition } from "./definition.js";
import { createHttpTool, type HttpToolOptions } from "./http-tool.js";

export interface HttpToolLoadError {
  /** The file (with `[i]` for an entry of an array file), or `httpTools[i]` for passed-in definitions. */
  path: string;
  message: string;
}

export interface HttpToolsLoadResult {
  tools: JsonSchemaTool[];
  errors: HttpToolLoadError[];
}

export interface LoadHttpToolsOptions extends Omit<HttpToolOptions, "env"> {
  /** Definitions from the config (`httpTools`), loaded after the folders. */
  definitions?: readonly unknown[];
  /** How errors in `definitions` name their source (default "httpTools"). */
  definitionsLabel?: string;
}

/** The folder of definitions shipped with Dimsum (`tools/http` at the package root). */
export function shippedHttpToolsDir(): string {
  // src/tools/http and dist/tools/http are both three levels below the package root.
  return fileURLToPath(new URL("../../../tools/http/", import.meta.url));
}

/** Shipped definitions, then `<home>/tools/http`, then `<cwd>/tools/http` (later ones win). */
export function defaultHttpToolDirs(home: string, cwd: string): string[] {
  return [shippedHttpToolsDir(), join(home, "tools", "http"), join(cwd, "tools", "http")];
}

/** Reads every `*.json` in `dirs` (one definition or an array of them per file) and builds the tools. */
export async function loadHttpTools(
  dirs: readonly string[],
  env: EnvMap,
  options: LoadHttpToolsOptions = {},
): Promise<HttpToolsLoadResult> {
  const { definitions, definitionsLabel = "httpTools", ...toolOptions } = options;
  const entries: Array<{ path: string; value: unknown }> = [];
  const errors: HttpToolLoadError[] = [];
  const uniqueDirs = [...new Set(dirs.map((d) => resolve(d)))];
  const perDir = await Promise.all(uniqueDirs.map(readDefinitionFiles));
  for (const result of perDir) {
    entries.push(...result.entries);
    errors.push(...result.errors);
  }
  for (const [i, value] of (definitions ?? []).entries())
    entries.push({ path: `${definitionsLabel}[${i}]`, value });

  const byName = new Map<string, JsonSchemaTool>();
  for (const { path, value } of entries) {
    const checked = checkHttpToolDefinition(value);
    if (!checked.ok) {
      errors.push({ path, message: `invalid HTTP tool definition: ${checked.message}` });
      continue;
    }
    const tool = createHttpTool(checked.tool, { ...toolOptions, env });
    byName.delete(tool.name);
    byName.set(tool.name, tool);
  }
  return { tools: [...byName.values()], errors };
}

async function readDefinitionFiles(dir: string): Promise<{
  entries: Array<{ path: string; value: unknown }>;
  errors: HttpToolLoadError[];
}> {
  const entries: Array<{ path: string; value: unknown }> = [];
  const errors: HttpToolLoadError[] = [];
  let names: string[];
  try {
    names = (await readdir(dir, { withFileTypes: true }))
      .filter((e) => (e.isFile() || e.isSymbolicLink()) && e.name.endsWith(".json"))
      .map((e) => e.name)
      .sort();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") {
      errors.push({ path: dir, message: `cannot read the folder: ${(err as Error).message}` });
    }
    return { entries, errors };
  }
  const texts = await Promise.all(
    names.map(async (name) => {
      const path = join(dir, name);
      try {
        return { path, text: await readFile(path, "utf8") };
      } catch (err) {
        return { path, error: `cannot read: ${(err as Error).message}` };
      }
    }),
  );
  for (const file of texts) {
    if (file.error !== undefined || file.text === undefined) {
      errors.push({ path: file.path, message: file.error ?? "cannot read" });
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(file.text);
    } catch (err) {
      errors.push({ path: file.path, message: `not valid JSON: ${jsonErrorWhere(err, file.text)}` });
      continue;
    }
    if (Array.isArray(value)) {
      value.forEach((item, i) => {
        entries.push({ path: `${file.path}[${i}]`, value: item });
      });
    } else entries.push({ path: file.path, value });
  }
  return { entries, errors };
}

/** JSON.parse's message with the line and column, which Node 20 leaves out (it gives a position). */
function jsonErrorWhere(err: unknown, text: string): string {
  const message = err instanceof Error ? err.message : String(err);
  const position = /at position (\d+)/.exec(message);
  if (!position || /line \d+/.test(message)) return message;
  const offset = Number(position[1]);
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - before.lastIndexOf("\n");
  return `${message} (line ${line} column ${column})`;
}
