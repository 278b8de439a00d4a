import { describe, expect, it } from "vitest";
import type { Block } from "../../src/attachments/extracted-document.js";
import { chunkBlocks, resolveChunking } from "../../src/knowledge/chunking/chunker.js";
import { parseMarkdown } from "../../src/knowledge/formats/markdown.js";
import { sentences, splitText, tail } from "../../src/knowledge/text/split.js";
import { estimateTokens } from "../../src/knowledge/text/tokens.js";
import { filler } from "./helpers.js";

const sizes = { parentTokens: 200, childTokens: 50, overlapTokens: 10 };

describe("chunkBlocks", () => {
  it("starts a new parent at a heading once the current one is a quarter full, and a child at every heading", () => {
    const doc = parseMarkdown(
      [
        "# Guide",
        "",
        filler(60, "intro"),
        "",
        "## Install",
        "",
        filler(40, "install"),
        "",
        "## Tiny",
        "",
        filler(10, "tiny"),
        "",
        "## Use",
        "",
        filler(30, "use"),
      ].join("\n"),
    );
    const parents = chunkBlocks(doc.blocks, sizes);
    expect(parents.map((p) => p.section)).toEqual(["Guide", "Guide › Install", "Guide › Use"]);
    // "Tiny" was too small to stand alone as a parent: it shares one with Install.
    expect(parents[1]!.text).toContain("Tiny\n\ntiny0 tiny1");
    expect(parents[1]!.children.map((c) => c.section)).toEqual(["Guide › Install", "Guide › Tiny"]);
    expect(parents[1]!.children.every((c) => c.headed)).toBe(true);
    for (const parent of parents) {
      expect(parent.tokens).toBeLessThanOrEqual(sizes.parentTokens);
      for (const child of parent.children) {
        // Every word of a child is in its parent (children never straddle two parents).
        for (const word of child.text.split(/\s+/)) expect(parent.text).toContain(word);
      }
    }
  });

  it("keeps a code block whole in one child when it fits twice the child size, and splits only bigger ones", () => {
    const code = [
      "```ts",
      ...Array.from({ length: 12 }, (_, i) => `const value${i} = compute(${i});`),
      "```",
    ].join("\n");
    expect(estimateTokens(code)).toBeGreaterThan(sizes.childTokens);
    expect(estimateTokens(code)).toBeLessThanOrEqual(sizes.childTokens * 2);
    const blocks: Block[] = [
      { kind: "text", text: filler(30, "before") },
      { kind: "code", text: code },
      { kind: "text", text: filler(30, "after") },
    ];
    const parents = chunkBlocks(blocks, sizes);
    const holders = parents.flatMap((p) => p.children).filter((c) => c.text.includes("const value"));
    expect(holders).toHaveLength(1);
    expect(holders[0]!.text).toContain(code);

    const huge = ["```", ...Array.from({ length: 80 }, (_, i) => `line_${i} = ${i}`), "```"].join("\n");
    const split = chunkBlocks([{ kind: "code", text: huge }], sizes);
    const pieces = split.flatMap((p) => p.children);
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.map((c) => c.text).join("\n")).toBe(huge);
  });

  it("repeats the end of the previous child at the start of the next (overlap), never across a heading", () => {
    const text = Array.from({ length: 12 }, (_, i) => `Sentence number ${i} talks about topic ${i}.`).join(
      " ",
    );
    const [parent] = chunkBlocks([{ kind: "text", text }], {
      parentTokens: 400,
      childTokens: 40,
      overlapTokens: 10,
    });
    const children = parent!.children;
    expect(children.length).toBeGreaterThan(2);
    for (let i = 1; i < children.length; i++) {
      const previousEnd = tail(children[i - 1]!.text, 10);
      expect(previousEnd.length).toBeGreaterThan(0);
      expect(children[i]!.text.startsWith(previousEnd)).toBe(true);
    }
    const noOverlap = chunkBlocks([{ kind: "text", text }], {
      parentTokens: 400,
      childTokens: 40,
      overlapTokens: 0,
    });
    const joined = noOverlap[0]!.children.map((c) => c.text).join(" ");
    expect(joined).toBe(text);

    const headed = chunkBlocks(
      parseMarkdown(`# A\n\n${filler(45, "aa")}\n\n# B\n\n${filler(10, "bb")}`).blocks,
      {
        parentTokens: 400,
        childTokens: 50,
        overlapTokens: 10,
      },
    );
    const b = headed.flatMap((p) => p.children).find((c) => c.section === "B");
    expect(b?.text.startsWith("B")).toBe(true);
  });

  it("carries page ranges from blocks to parents and children", () => {
    const blocks: Block[] = [
      { kind: "text", text: filler(40, "p1"), page: 1 },
      { kind: "text", text: filler(40, "p2"), page: 2 },
      { kind: "text", text: filler(40, "p3"), page: 3 },
    ];
    const parents = chunkBlocks(blocks, { parentTokens: 100, childTokens: 45, overlapTokens: 0 });
    expect(parents.map((p) => [p.pageStart, p.pageEnd])).toEqual([
      [1, 2],
      [3, 3],
    ]);
    expect(parents[0]!.children.map((c) => c.pageStart)).toEqual([1, 2]);
  });

  it("overlaps parents only when asked, when a long section spills over", () => {
    const long = Array.from({ length: 40 }, (_, i) => `Fact ${i} is stated here plainly.`).join(" ");
    const plain = chunkBlocks([{ kind: "text", text: long }], {
      parentTokens: 60,
      childTokens: 30,
      overlapTokens: 0,
    });
    const overlapped = chunkBlocks([{ kind: "text", text: long }], {
      parentTokens: 60,
      childTokens: 30,
      overlapTokens: 0,
      parentOverlapTokens: 8,
    });
    expect(plain.length).toBeGreaterThan(1);
    expect(plain[1]!.text.startsWith(tail(plain[0]!.text, 8))).toBe(false);
    expect(overlapped[1]!.text.startsWith(tail(overlapped[0]!.text, 8))).toBe(true);
  });

  it("splits CJK text without spaces into sized pieces, keeping it unspaced", () => {
    const text = "空气动力学研究飞行器周围的气流。机翼产生升力。".repeat(20);
    const parents = chunkBlocks([{ kind: "text", text }], {
      parentTokens: 200,
      childTokens: 60,
      overlapTokens: 0,
    });
    const children = parents.flatMap((p) => p.children);
    expect(children.length).toBeGreaterThan(3);
    expect(children.every((c) => c.tokens <= 60)).toBe(true);
    expect(children.map((c) => c.text).join("")).toBe(text);
  });
});

describe("text helpers", () => {
  it("splits sentences at Western and CJK sentence ends", () => {
    expect(sentences("One. Two! Three? 四。五！")).toEqual(["One.", "Two!", "Three?", "四。", "五！"]);
    // "a b c d" is 7 characters: 2 estimated tokens.
    expect(splitText("a b c d e f g h", 2)).toEqual(["a b c d", "e f g h"]);
    expect(splitText("First one here. Second one here.", 4)).toEqual(["First one here.", "Second one here."]);
  });

  it("clamps inconsistent sizes", () => {
    expect(resolveChunking({ parentTokens: 100, childTokens: 500, overlapTokens: 400 })).toEqual({
      parentTokens: 100,
      childTokens: 100,
      overlapTokens: 50,
      parentOverlapTokens: 0,
    });
  });
});
