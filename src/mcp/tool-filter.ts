/** Per-server `include`/`exclude` lists: exact tool names or globs with `*` and `?`. */

export interface ToolFilter {
  include: readonly string[];
  exclude: readonly string[];
}

/** True when the tool named `name` should be offered under `filter`. */
export function toolAllowed(name: string, filter: ToolFilter): boolean {
  if (filter.include.length > 0 && !filter.include.some((pattern) => matchesGlob(name, pattern))) {
    return false;
  }
  return !filter.exclude.some((pattern) => matchesGlob(name, pattern));
}

/** Whole-name match; `*` is any run of characters, `?` one character, everything else literal. */
export function matchesGlob(name: string, pattern: string): boolean {
  if (!pattern.includes("*") && !pattern.includes("?")) return name === pattern;
  const source = pattern
    .split("")
    .map((ch) => (ch === "*" ? ".*" : ch === "?" ? "." : ch.replace(/[.+^${}()|[\]\\]/g, "\\$&")))
    .join("");
  return new RegExp(`^${source}$`, "s").test(name);
}
