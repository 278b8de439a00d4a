import { describe, expect, it } from "vitest";
import { cjkBigrams, hasCjk, segments } from "../../src/store/text/cjk.js";
import { porterStem } from "../../src/store/text/porter-stemmer.js";
import {
  ftsColumns,
  ftsMatchExpression,
  indexTerms,
  isWeakTerm,
  jaccard,
  MatchEvidence,
  normalizeText,
  queryTerms,
  termSet,
} from "../../src/store/text/terms.js";

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
    expect(ftsColumns("The user prefers dark roast")).toEqual({
      terms: "the user prefer dark roast",
      chars: "",
    });
  });

  it("puts single characters and bigrams starting with hiragana in the weak column", () => {
    expect(ftsColumns("喜欢咖啡")).toEqual({ terms: "喜欢 欢咖 咖啡", chars: "喜 欢 咖 啡" });
    // 好き (kanji + okurigana) is a word stem and stays strong; きな, なラ start with a particle.
    expect(ftsColumns("好きなラーメン")).toEqual({
      terms: "好き ラー ーメ メン",
      chars: "好 き な ラ ー メ ン きな なラ",
    });
    expect(isWeakTerm("茶")).toBe(true);
    expect(isWeakTerm("して")).toBe(true);
    expect(isWeakTerm("乌龙")).toBe(false);
    expect(isWeakTerm("a")).toBe(false);
  });

  it("queries CJK runs by bigrams and meaningful single characters, and drops English stop words", () => {
    expect(queryTerms("咖啡")).toEqual(["咖啡", "咖", "啡"]);
    expect(queryTerms("猫")).toEqual(["猫"]);
    // 我, 应, 该, 什, 么 say nothing alone, and neither do 应该 or 什么; 喝 and 茶 do.
    expect(queryTerms("我应该喝什么茶？")).toEqual(["该喝", "喝什", "么茶", "喝", "茶"]);
    // Lone hiragana are grammar: only the kanji count as single characters.
    expect(queryTerms("お茶を飲む")).toEqual(["お茶", "茶を", "を飲", "飲む", "茶", "飲"]);
    expect(queryTerms("What does the user prefer to drink?")).toEqual(["user", "prefer", "drink"]);
    // Only stop words: keep them rather than search for nothing.
    expect(queryTerms("who am I")).toEqual(["who", "am", "i"]);
    expect(queryTerms("你的")).toEqual(["你的", "你", "的"]);
  });

  it("quotes every term so FTS5 never reads one as syntax, and sends weak terms to their column", () => {
    expect(ftsMatchExpression(["near", "and", 'a"b'])).toBe('terms : ("near" OR "and" OR "a""b")');
    expect(ftsMatchExpression(["乌龙", "茶"])).toBe('(terms : ("乌龙") OR chars : ("茶"))');
    expect(ftsMatchExpression(["茶"])).toBe('chars : ("茶")');
  });

  it("needs two meaningful shared characters (or a shared bigram) before a character-only hit counts", () => {
    const evidence = new MatchEvidence(queryTerms("我应该喝什么茶？"));
    expect(evidence.accepts("用户喜欢喝乌龙茶，不喝咖啡", 4, 4)).toBe(true);
    expect(evidence.accepts("用户喜欢喝可乐", 2, 4)).toBe(false);
    // Enough characters, but far behind the best hit.
    expect(evidence.accepts("喝了一杯茶", 0.5, 4)).toBe(false);
    const english = new MatchEvidence(queryTerms("tea"));
    expect(english.accepts("anything at all", 0.01, 10)).toBe(true);
    expect(new MatchEvidence(queryTerms("茶")).accepts("红茶", 1, 1)).toBe(true);
  });

  it("measures near-duplicates by term Jaccard", () => {
    const a = termSet("The user prefers dark roast coffee");
    const b = termSet("User preferred dark-roast coffee.");
    expect(jaccard(a, b)).toBe(1);
    expect(jaccard(a, termSet("The user lives in Berlin"))).toBeLessThan(0.3);
    expect(jaccard(new Set(), new Set())).toBe(1);
  });
});
