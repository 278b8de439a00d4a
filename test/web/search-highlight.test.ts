import { describe, expect, it } from "vitest";
import {
  highlightParts,
  searchExcerpt,
  type TextPart,
  termMatcher,
} from "../../web/src/components/search-highlight.js";

const hits = (parts: TextPart[]) => parts.filter((p) => p.hit).map((p) => p.text);
const joined = (parts: TextPart[]) => parts.map((p) => p.text).join("");

describe("search highlighting", () => {
  it("marks words that start with a query word, in any case, and nothing inside other words", () => {
    const parts = highlightParts("Deploy the deployment; redeploy later", termMatcher("deploy"));
    expect(hits(parts)).toEqual(["Deploy", "deploy"]);
    expect(joined(parts)).toBe("Deploy the deployment; redeploy later");
    expect(parts[1]).toEqual({ text: " the ", hit: false });
  });

  it("marks every query word and treats regex characters literally", () => {
    const parts = highlightParts("cost (a+b) is $5 for a.b", termMatcher("a.b cost"));
    expect(hits(parts)).toEqual(["cost", "a", "b", "a", "b"]);
    expect(joined(parts)).toBe("cost (a+b) is $5 for a.b");
  });

  it("marks a CJK run whole, or the bigrams the server matched it by", () => {
    expect(hits(highlightParts("我们的数据库很快", termMatcher("数据库")))).toEqual(["数据库"]);
    expect(hits(highlightParts("数据在库里，据库", termMatcher("数据库")))).toEqual(["数据", "据库"]);
  });

  it("has nothing to mark for a query without letters or numbers", () => {
    expect(termMatcher("  ?! ")).toBeUndefined();
    expect(highlightParts("<b>x</b>", undefined)).toEqual([{ text: "<b>x</b>", hit: false }]);
  });

  it("keeps short messages whole on one line", () => {
    const parts = searchExcerpt("first line\n\n  second <b>line</b>", "second");
    expect(joined(parts)).toBe("first line second <b>line</b>");
    expect(hits(parts)).toEqual(["second"]);
  });

  it("cuts a long message around its first match, with ellipses", () => {
    const text = `${"lorem ipsum ".repeat(40)}the pelican arrives ${"dolor sit ".repeat(40)}`;
    const parts = searchExcerpt(text, "pelican", 120);
    const shown = joined(parts);
    expect(shown.startsWith("…")).toBe(true);
    expect(shown.endsWith("…")).toBe(true);
    expect(shown.length).toBeLessThanOrEqual(122);
    expect(hits(parts)).toEqual(["pelican"]);
    expect(shown.indexOf("pelican")).toBeGreaterThan(20);
  });

  it("never splits an emoji at a cut", () => {
    const text = "😀".repeat(200);
    for (const max of [99, 100, 101]) {
      const shown = joined(searchExcerpt(text, "zzz", max));
      expect(shown.replaceAll("😀", "").replaceAll("…", "")).toBe("");
    }
  });
});

describe("search excerpts of Markdown messages", () => {
  it("shows **strong**, *em* and `code` as emphasis without their markers", () => {
    const parts = searchExcerpt(
      "## Plan\n- the **deploy** runs *tonight* via `make ship`, see [docs](https://x.y/z)",
      "deploy",
    );
    expect(joined(parts)).toBe("Plan the deploy runs tonight via make ship, see docs");
    expect(parts.find((p) => p.hit)).toEqual({ text: "deploy", hit: true, style: "strong" });
    expect(parts.filter((p) => p.style).map((p) => [p.text, p.style])).toEqual([
      ["deploy", "strong"],
      ["tonight", "em"],
      ["make ship", "code"],
    ]);
  });

  it("leaves lone asterisks and snake_case words alone", () => {
    expect(joined(searchExcerpt("2 * 3 = 6 and my_var_name", "var"))).toBe("2 * 3 = 6 and my_var_name");
  });

  it("keeps styles aligned when a long message is cut", () => {
    const text = `${"lorem ipsum ".repeat(40)}the **pelican** arrives ${"dolor sit ".repeat(40)}`;
    const parts = searchExcerpt(text, "pelican", 120);
    expect(parts.find((p) => p.hit)).toEqual({ text: "pelican", hit: true, style: "strong" });
    expect(joined(parts)).not.toContain("*");
  });
});
