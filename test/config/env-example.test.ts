/**
 * `.env.example` at the repository root lists every variable the README's Configuration table
 * documents (issue 34, item 15), all commented out, so a copy to `.env` sets nothing by surprise.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "../..");

/** The variables named in the first column of the README's Configuration tables. */
function documentedVariables(): string[] {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const section = readme.split(/^## Configuration$/m)[1]?.split(/^## /m)[0] ?? "";
  const names = new Set<string>();
  for (const line of section.split("\n")) {
    if (!line.startsWith("| `")) continue;
    const first = line.split("|")[1] ?? "";
    for (const match of first.matchAll(/`([A-Z][A-Z0-9_]{2,})`/g)) names.add(match[1] ?? "");
  }
  return [...names];
}

describe(".env.example", () => {
  it("lists every variable the README documents, commented out", () => {
    const example = readFileSync(join(root, ".env.example"), "utf8");
    const documented = documentedVariables();
    expect(documented).toEqual(expect.arrayContaining(["DIMSUM_MODEL", "PORT", "MINIMAX_API_KEY"]));
    const listed = new Set([...example.matchAll(/^#\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]));
    expect(documented.filter((name) => !listed.has(name))).toEqual([]);
    // Nothing is set when the file is copied as it is.
    expect(example.split("\n").filter((line) => /^[A-Z]/.test(line))).toEqual([]);
  });
});
