import { describe, expect, it } from "vitest";
import { cjkBigrams, hasCjk, segments } from "../../src/memory/text/cjk.js";
import { porterStem } from "../../src/memory/text/porter-stemmer.js";
import {
  ftsDocument,
  ftsMatchExpression,
  indexTerms,
  jaccard,
  normalizeText,
  queryTerms,
  termSet,
} from "../../src/memory/text/terms.js";

describe("porterStem", () => {
  it("stems the examples of Porter's paper", () => {
    const cases: Record<string, string> = {
      caresses: "caress",
      ponies: "poni",
      cats: "cat",
      feed: "feed",
      agreed: "agre",
      plastered: "plaster",
      motoring: "motor",
      sing: "sing",
      conflated: "conflat",
      troubled: "troubl",
      hopping: "hop",
      filing: "file",
      happy: "happi",
      relational: "relat",
      conditional: "condit",
      digitizer: "digit",
      generalization: "gener",
      hopeful: "hope",
      goodness: "good",
      revival: "reviv",
      adjustment: "adjust",
      adoption: "adopt",
      controll: "control",
      roll: "roll",
    };
    for (const [word, stem] of Object.entries(cases)) expect(porterStem(word), word).toBe(stem);
  });

  it("brings inflections of one word together and leaves non-English tokens alone", () => {
    expect(new Set(["prefer", "prefers", "preferred", "preferring"].map(porterStem)).size).toBe(1);
    expect(porterStem("café")).toBe("café");
    expect(porterStem("gpt4")).toBe("gpt4");
    expect(porterStem("is")).toBe("is");
  });
});

describe("CJK segmentation", () => {
  it("splits CJK runs from other words and drops punctuation", () => {
    expect(segments("我喜欢Python编程，也喜欢 coffee!")).toEqual([
      { kind: "cjk", text: "我喜欢" },
      { kind: "word", text: "Python" },
      { kind: "cjk", text: "编程" },
      { kind: "cjk", text: "也喜欢" },
      { kind: "word", text: "coffee" },
    ]);
    expect(segments("東京に住んでいます。")).toEqual([{ kind: "cjk", text: "東京に住んでいます" }]);
    expect(hasCjk("hello")).toBe(false);
    expect(hasCjk("ラーメン")).toBe(true);
  });

  it("makes overlapping bigrams by code point", () => {
    expect(cjkBigrams("喜欢咖啡")).toEqual(["喜欢", "欢咖", "咖啡"]);
    expect(cjkBigrams("𠀀𠀁x")).toEqual(["𠀀𠀁", "𠀁x"]);
    expect(cjkBigrams("猫")).toEqual([]);
  });
});

describe("index and query terms", () => {
  it("normalises width, case and Latin accents but keeps Japanese voicing marks", () => {
    expect(normalizeText("Ｃａｆé ÜBER")).toBe("cafe uber");
    expect(normalizeText("がぎ")).toBe("がぎ");
  });

  it("indexes CJK runs as characters plus bigrams, and stems English words", () => {
    expect(indexTerms("用户喜欢咖啡")).toEqual([
      "用",
      "户",
      "喜",
      "欢",
      "咖",
      "啡",
      "用户",
      "户喜",
      "喜欢",
      "欢咖",
      "咖啡",
    ]);
    expect(ftsDocument("The user prefers dark roast")).toBe("the user prefer dark roast");
  });

  it("queries CJK runs by bigrams (a lone character stays) and drops English stop words", () => {
    expect(queryTerms("咖啡")).toEqual(["咖啡"]);
    expect(queryTerms("猫")).toEqual(["猫"]);
    expect(queryTerms("What does the user prefer to drink?")).toEqual(["user", "prefer", "drink"]);
    // Only stop words: keep them rather than search for nothing.
    expect(queryTerms("who am I")).toEqual(["who", "am", "i"]);
  });

  it("quotes every term so FTS5 never reads one as syntax", () => {
    expect(ftsMatchExpression(["near", "and", 'a"b'])).toBe('"near" OR "and" OR "a""b"');
  });

  it("measures near-duplicates by term Jaccard", () => {
    const a = termSet("The user prefers dark roast coffee");
    const b = termSet("User preferred dark-roast coffee.");
    expect(jaccard(a, b)).toBe(1);
    expect(jaccard(a, termSet("The user lives in Berlin"))).toBeLessThan(0.3);
    expect(jaccard(new Set(), new Set())).toBe(1);
  });
});
