/**
 * Source code into blocks: a new block starts after a blank line when the next line is not
 * indented, so a function or class (whose body is indented) stays in one block even across blank
 * lines inside it. A block that opens with a declaration is labelled with it, for citations.
 */
import type { Block, ExtractedDocument } from "../../attachments/extracted-document.js";

const DECLARATION =
  /^(?:export\s+|pub(?:\([^)]*\))?\s+|public\s+|private\s+|protected\s+|static\s+|async\s+|default\s+|abstract\s+|final\s+)*(?:function\*?|class|interface|type|enum|struct|trait|impl|def|fn|func|fun|module|namespace|const|let|var|object|record)\b[^\n]*/;

/** The first declaration line of a block, shortened, if it opens with one (after comments/decorators). */
function declarationOf(lines: readonly string[]): string | undefined {
  for (const line of lines) {
    const trimmed = line.trim();
    if (trimmed === "" || /^(\/\/|#|\/?\*|--|@|"""|''')/.test(trimmed)) continue;
    const match = DECLARATION.exec(trimmed);
    if (!match) return undefined;
    const text = match[0].replace(/\s*[{:=(]?\s*$/, "").trim();
    return text.length > 80 ? `${text.slice(0, 79)}…` : text;
  }
  return undefined;
}

/** Splits source code into blocks at blank lines followed by unindented lines. */
export function parseCode(source: string): ExtractedDocument {
  const lines = source.replace(/^\uFEFF/, "").split(/\r?\n/);
  const groups: string[][] = [];
  let current: string[] = [];
  let sawBlank = false;
  for (const line of lines) {
    if (line.trim() === "") {
      sawBlank = true;
      if (current.length > 0) current.push(line);
      continue;
    }
    // Closing brackets belong to the block above even when a blank line precedes them.
    const startsBlock = sawBlank && !/^[\s)}\]]/.test(line);
    if (startsBlock && current.length > 0) {
      groups.push(current);
      current = [];
    }
    current.push(line);
    sawBlank = false;
  }
  if (current.length > 0) groups.push(current);
  const blocks: Block[] = [];
  for (const group of groups) {
    const text = group.join("\n").replace(/\s+$/, "");
    if (text.trim() === "") continue;
    const label = declarationOf(group);
    blocks.push(label ? { kind: "code", text, label } : { kind: "code", text });
  }
  return { blocks };
}
