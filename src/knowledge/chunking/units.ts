/**
 * The first step of chunking: blocks become units no bigger than a parent chunk, each knowing the
 * heading path (section) it sits under and its page. Headings stay units of their own, so the packer
 * can start chunks at them.
 */
import type { Block } from "../../attachments/extracted-document.js";
import { splitCode, splitText } from "../text/split.js";
import { estimateTokens } from "../text/tokens.js";

export interface Unit {
  kind: Block["kind"];
  text: string;
  tokens: number;
  /** Heading path (`A › B`) or block label; undefined before the first heading. */
  section?: string;
  page?: number;
  /** Index of the block this unit came from; pieces of one block share it. */
  block: number;
}

export const SECTION_SEPARATOR = " › ";

/** Turns blocks into units of at most `maxTokens`, splitting long prose at sentences and long code at blank lines. */
export function toUnits(blocks: readonly Block[], maxTokens: number): Unit[] {
  const headings: Array<{ level: number; text: string }> = [];
  const units: Unit[] = [];
  blocks.forEach((block, index) => {
    if (block.kind === "heading") {
      const level = block.level ?? 1;
      while (headings.length > 0 && headings.at(-1)!.level >= level) headings.pop();
      headings.push({ level, text: block.text.replace(/\s+/g, " ").trim() });
    }
    const path = headings.map((h) => h.text).join(SECTION_SEPARATOR);
    const section = block.label ?? (path === "" ? undefined : path);
    const pieces =
      block.kind === "code"
        ? splitCode(block.text, maxTokens)
        : block.kind === "text"
          ? splitText(block.text, maxTokens)
          : [block.text];
    for (const text of pieces) {
      const unit: Unit = { kind: block.kind, text, tokens: estimateTokens(text), block: index };
      if (section !== undefined) unit.section = section;
      if (block.page !== undefined) unit.page = block.page;
      units.push(unit);
    }
  });
  return units;
}
