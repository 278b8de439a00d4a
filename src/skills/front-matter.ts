/**
 * Splits a SKILL.md into its YAML front matter and Markdown body. Line numbers in errors are lines
 * of the whole file, so a user can jump straight to the problem.
 */
import { createRequire } from "node:module";
import type * as Yaml from "yaml";

// yaml (CommonJS) loads with the first SKILL.md parsed, not with every command that imports skills.
let yaml: typeof Yaml | undefined;
function loadYaml(): typeof Yaml {
  yaml ??= createRequire(import.meta.url)("yaml") as typeof Yaml;
  return yaml;
}

export interface FrontMatter {
  data: Record<string, unknown>;
  body: string;
  /** The file line where `key` is written, or the opening fence line when the key is absent. */
  lineOf(key: string): number;
}

export type FrontMatterResult = ({ ok: true } & FrontMatter) | { ok: false; line: number; message: string };

const FENCE = "---";

/** Parses `---` fenced YAML at the top of `text`; failures name the file line to fix. */
export function parseFrontMatter(text: string): FrontMatterResult {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  if (lines[0]?.trimEnd() !== FENCE) {
    return {
      ok: false,
      line: 1,
      message: "SKILL.md must start with a `---` line that opens the YAML front matter (name, description)",
    };
  }
  const close = lines.findIndex((line, i) => i > 0 && (line.trimEnd() === FENCE || line.trimEnd() === "..."));
  if (close < 0) {
    return {
      ok: false,
      line: 1,
      message: "the front matter opened on line 1 is never closed; add a `---` line after it",
    };
  }
  // One leading newline stands in for the opening fence, so YAML positions are file positions.
  const yamlText = `\n${lines.slice(1, close).join("\n")}`;
  const { isMap, isScalar, parseDocument } = loadYaml();
  const doc = parseDocument(yamlText, { prettyErrors: true });
  const first = doc.errors[0];
  if (first) {
    return {
      ok: false,
      line: first.linePos?.[0].line ?? 2,
      message: `invalid YAML: ${yamlReason(first.message)}`,
    };
  }
  const lineAt = (offset: number) => countLines(yamlText, offset);
  if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) {
    return frontMatter({}, lines, close, () => 1);
  }
  if (!isMap(doc.contents)) {
    return { ok: false, line: 2, message: "the front matter must be YAML keys and values (`name: ...`)" };
  }
  const map = doc.contents;
  const data = doc.toJS({ maxAliasCount: 50 }) as Record<string, unknown>;
  const lineOf = (key: string): number => {
    const pair = map.items.find((item) => isScalar(item.key) && item.key.value === key);
    const offset = pair && isScalar(pair.key) ? pair.key.range?.[0] : undefined;
    return offset === undefined ? 1 : lineAt(offset);
  };
  return frontMatter(data, lines, close, lineOf);
}

function frontMatter(
  data: Record<string, unknown>,
  lines: string[],
  close: number,
  lineOf: (key: string) => number,
): FrontMatterResult {
  return { ok: true, data, body: lines.slice(close + 1).join("\n"), lineOf };
}

/** The first line of a yaml error without its position suffix (we print `file:line` ourselves). */
function yamlReason(message: string): string {
  const firstLine = message.split("\n")[0] ?? message;
  return firstLine.replace(/ at line \d+, column \d+:?$/, "");
}

function countLines(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}
