/**
 * Two-level, structure-aware chunking. Parents (~800 tokens) are what the model reads; children
 * (~200 tokens) are what search matches, each inside exactly one parent.
 * - A heading starts a new parent once the current one holds a quarter of the target, so tiny
 *   sections share a parent instead of making crumbs; children always start at headings.
 * - A code block is never cut while it fits: whole in one parent, and whole in one child up to twice
 *   the child size.
 * - Children repeat the last `overlapTokens` of the previous child (prose only), so a sentence cut at
 *   a boundary is matched whole on one side. Parents overlap only when a long section spills over.
 */
import type { Block } from "../../attachments/extracted-document.js";
import { splitCode, splitText, tail } from "../text/split.js";
import { estimateTokens } from "../text/tokens.js";
import type { ChunkingOptions } from "../types.js";
import { toUnits, type Unit } from "./units.js";

export interface ChunkPiece {
  text: string;
  tokens: number;
  section?: string;
  pageStart?: number;
  pageEnd?: number;
}

export interface ChildChunk extends ChunkPiece {
  /** True when the child opens with a heading, so its section is already in its text. */
  headed: boolean;
}

export interface ParentChunk extends ChunkPiece {
  children: ChildChunk[];
}

export const DEFAULT_CHUNKING: Readonly<Required<ChunkingOptions>> = Object.freeze({
  parentTokens: 800,
  childTokens: 200,
  overlapTokens: 40,
  parentOverlapTokens: 0,
});

/** Fills in defaults and keeps the sizes consistent (children no bigger than parents, overlap smaller than a child). */
export function resolveChunking(options: ChunkingOptions = {}): Required<ChunkingOptions> {
  const parentTokens = Math.max(20, Math.floor(options.parentTokens ?? DEFAULT_CHUNKING.parentTokens));
  const childTokens = Math.min(
    parentTokens,
    Math.max(10, Math.floor(options.childTokens ?? DEFAULT_CHUNKING.childTokens)),
  );
  const overlapTokens = Math.min(
    Math.floor(childTokens / 2),
    Math.max(0, Math.floor(options.overlapTokens ?? DEFAULT_CHUNKING.overlapTokens)),
  );
  const parentOverlapTokens = Math.min(
    Math.floor(parentTokens / 2),
    Math.max(0, Math.floor(options.parentOverlapTokens ?? DEFAULT_CHUNKING.parentOverlapTokens)),
  );
  return { parentTokens, childTokens, overlapTokens, parentOverlapTokens };
}

const CJK_EDGE = /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}]/u;

/** Joins pieces: blank lines between blocks; inside one block a newline (code), else a space (none between CJK). */
function joinPieces(pieces: ReadonlyArray<{ text: string; block: number; kind: Unit["kind"] }>): string {
  let out = "";
  let lastBlock = -1;
  for (const piece of pieces) {
    if (out !== "") {
      if (piece.block !== lastBlock) out += "\n\n";
      else if (piece.kind === "code") out += "\n";
      else if (!(CJK_EDGE.test(out.at(-1) ?? "") && CJK_EDGE.test(piece.text[0] ?? ""))) out += " ";
    }
    out += piece.text;
    lastBlock = piece.block;
  }
  return out;
}

function describe<T extends ChunkPiece>(base: T, units: readonly Unit[]): T {
  // The section of the first content (not a heading line): a chunk opening with "# Guide" then
  // "## Brakes" is about Guide › Brakes.
  const content = units.find((u) => u.kind !== "heading" && u.section !== undefined);
  const section = (content ?? units.find((u) => u.section !== undefined))?.section;
  if (section !== undefined) base.section = section;
  const pages = units.map((u) => u.page).filter((p): p is number => p !== undefined);
  if (pages.length > 0) {
    base.pageStart = Math.min(...pages);
    base.pageEnd = Math.max(...pages);
  }
  return base;
}

/** Groups units into parents: flush at headings (past a quarter full) and before overflowing. */
function packParents(units: readonly Unit[], options: Required<ChunkingOptions>): Unit[][] {
  const groups: Unit[][] = [];
  let current: Unit[] = [];
  let tokens = 0;
  const minAtHeading = options.parentTokens / 4;
  for (const unit of units) {
    const atHeading = unit.kind === "heading" && tokens >= minAtHeading;
    const overflow = current.length > 0 && tokens + unit.tokens > options.parentTokens;
    if (atHeading || overflow) {
      // A heading never ends a parent: it moves on with the content it introduces.
      const carried: Unit[] = [];
      while (overflow && current.length > 0 && current.at(-1)!.kind === "heading")
        carried.unshift(current.pop()!);
      if (current.length > 0) groups.push(current);
      current = carried;
      tokens = carried.reduce((sum, u) => sum + u.tokens, 0);
      if (
        overflow &&
        !atHeading &&
        carried.length === 0 &&
        options.parentOverlapTokens > 0 &&
        unit.kind === "text"
      ) {
        const previous = groups
          .at(-1)!
          .filter((u) => u.kind === "text")
          .at(-1);
        const repeated = previous ? tail(previous.text, options.parentOverlapTokens) : "";
        if (repeated !== "" && repeated !== previous?.text) {
          const overlap: Unit = { ...previous!, text: repeated, tokens: estimateTokens(repeated) };
          current.push(overlap);
          tokens += overlap.tokens;
        }
      }
    }
    current.push(unit);
    tokens += unit.tokens;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

/** Splits one parent's units into children with overlap. */
function packChildren(units: readonly Unit[], options: Required<ChunkingOptions>): ChildChunk[] {
  const pieces: Unit[] = units.flatMap((unit) => {
    if (unit.kind === "code") {
      if (unit.tokens <= options.childTokens * 2) return [unit];
      return splitCode(unit.text, options.childTokens).map((text) => ({
        ...unit,
        text,
        tokens: estimateTokens(text),
      }));
    }
    if (unit.kind === "text" && unit.tokens > options.childTokens) {
      return splitText(unit.text, options.childTokens).map((text) => ({
        ...unit,
        text,
        tokens: estimateTokens(text),
      }));
    }
    return [unit];
  });
  const children: ChildChunk[] = [];
  let current: Unit[] = [];
  let tokens = 0;
  let overlap: Unit | undefined;
  const flush = () => {
    const own = current.filter((u) => u !== overlap);
    if (own.length === 0) return;
    const text = joinPieces(current);
    const child = describe<ChildChunk>(
      { text, tokens: estimateTokens(text), headed: own[0]!.kind === "heading" },
      own,
    );
    children.push(child);
    const last = own.at(-1)!;
    const repeated = last.kind === "text" ? tail(last.text, options.overlapTokens) : "";
    overlap =
      repeated !== "" && repeated !== last.text
        ? { ...last, text: repeated, tokens: estimateTokens(repeated) }
        : undefined;
    current = [];
    tokens = 0;
  };
  for (const piece of pieces) {
    const onlyHeadings = current.every((u) => u.kind === "heading");
    if (piece.kind === "heading" && !onlyHeadings) {
      flush();
      overlap = undefined;
    } else if (current.length > 0 && !onlyHeadings && tokens + piece.tokens > options.childTokens) {
      flush();
    }
    if (current.length === 0 && overlap && piece.kind === "text") {
      current.push(overlap);
      tokens += overlap.tokens;
    }
    current.push(piece);
    tokens += piece.tokens;
  }
  flush();
  return children;
}

/** Chunks a document's blocks into parents, each with its children. */
export function chunkBlocks(blocks: readonly Block[], options: ChunkingOptions = {}): ParentChunk[] {
  const resolved = resolveChunking(options);
  const units = toUnits(blocks, resolved.parentTokens);
  return packParents(units, resolved).map((group) => {
    const text = joinPieces(group);
    const parent = describe<ParentChunk>({ text, tokens: estimateTokens(text), children: [] }, group);
    parent.children = packChildren(group, resolved);
    return parent;
  });
}
