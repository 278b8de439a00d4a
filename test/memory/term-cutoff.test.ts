import { describe, expect, it } from "vitest";
import { TermCutoff } from "../../src/store/text/term-cutoff.js";

function counts(table: Record<string, number>) {
  const lookups: string[] = [];
  const lookup = (term: string) => {
    lookups.push(term);
    return table[term];
  };
  return { lookups, lookup };
}

describe("TermCutoff", () => {
  it("keeps the rarest terms within the postings budget, always at least one, and unknown terms", () => {
    const { lookup } = counts({ rare: 10, mid: 500, common: 5000 });
    const cutoff = new TermCutoff(lookup, 1000);
    expect(cutoff.plan(["common", "rare", "mid", "absent"])).toEqual({
      kept: ["absent", "rare", "mid"],
      postings: 510,
    });
    expect(cutoff.plan(["common"])).toEqual({ kept: ["common"], postings: 5000 });
  });

  it("caches counts until enough documents were written, but never caches a zero", () => {
    const table: Record<string, number> = { word: 3 };
    const { lookups, lookup } = counts(table);
    const cutoff = new TermCutoff(lookup, 1000);
    cutoff.documentFrequency("word");
    cutoff.documentFrequency("word");
    cutoff.documentFrequency("new");
    cutoff.documentFrequency("new");
    expect(lookups).toEqual(["word", "new", "new"]);
    for (let i = 0; i < 500; i++) cutoff.wrote();
    table.word = 4;
    expect(cutoff.documentFrequency("word")).toBe(4);
  });

  it("keeps every term without looking any up when there is no budget", () => {
    const { lookups, lookup } = counts({ a: 1 });
    expect(new TermCutoff(lookup, Number.POSITIVE_INFINITY).plan(["b", "a"]).kept).toEqual(["b", "a"]);
    expect(lookups).toEqual([]);
  });
});
