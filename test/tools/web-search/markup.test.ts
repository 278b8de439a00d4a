/** The light HTML handling behind the DuckDuckGo parser. */
import { describe, expect, it } from "vitest";
import { parseDuckDuckGoHtml, unwrapDuckDuckGoLink } from "../../../src/tools/web-search/index.js";
import { cleanText, decodeEntities, findByClass } from "../../../src/tools/web-search/markup.js";

describe("decodeEntities", () => {
  it("decodes numeric and common named references exactly once", () => {
    expect(decodeEntities("a &amp; b &#39;c&#x27; &#8211; &mdash; &nbsp;")).toBe("a & b 'c' – — \u00a0");
    expect(decodeEntities("&amp;lt;b&amp;gt;")).toBe("&lt;b&gt;");
    expect(decodeEntities("&unknownthing; &#1114112;")).toBe("&unknownthing; \uFFFD");
  });

  it("cleanText strips tags before decoding, so escaped markup stays text", () => {
    expect(cleanText("  <b>bold</b>\n &lt;i&gt; <!-- note --> end ")).toBe("bold <i> end");
  });
});

describe("findByClass", () => {
  it("finds elements by one of their classes, attributes in any order, '>' inside quotes", () => {
    const html = `
      <a href="/one?x=1&amp;y=2" class="big result__a" data-note="a > b">First <b>one</b></a>
      <A CLASS='result__a' HREF=/two>Second</A>
      <a class="result__abc" href="/no">not this</a>
      <div class="result__snippet">snippet</div>`;
    const found = findByClass(html, ["result__a", "result__snippet"]);
    expect(found.map((f) => [f.name, f.attributes.get("href"), cleanText(f.inner)])).toEqual([
      ["a", "/one?x=1&y=2", "First one"],
      ["a", "/two", "Second"],
      ["div", undefined, "snippet"],
    ]);
  });
});

describe("DuckDuckGo links", () => {
  it("unwraps /l/?uddg= redirects and drops ads and internal links", () => {
    const target = "https://example.com/a b?x=1&y=2";
    expect(unwrapDuckDuckGoLink(`//duckduckgo.com/l/?uddg=${encodeURIComponent(target)}&rut=abc`)).toBe(
      target,
    );
    expect(unwrapDuckDuckGoLink("https://duckduckgo.com/y.js?ad_domain=x")).toBeUndefined();
    expect(unwrapDuckDuckGoLink("/html/?q=next")).toBeUndefined();
    expect(
      unwrapDuckDuckGoLink(`//duckduckgo.com/l/?uddg=${encodeURIComponent("javascript:alert(1)")}`),
    ).toBe(undefined);
    expect(unwrapDuckDuckGoLink("https://direct.example.org/page")).toBe("https://direct.example.org/page");
  });

  it("pairs each snippet with its own result, even when a result has none", () => {
    const page = parseDuckDuckGoHtml(`
      <a class="result__a" href="https://a.example/">A</a>
      <a class="result__a" href="https://b.example/">B</a>
      <a class="result__snippet" href="https://b.example/">about B</a>
      <a class="result__a" href="https://duckduckgo.com/y.js?ad">Ad</a>
      <a class="result__snippet" href="#">ad text</a>
      <a class="result__a" href="https://c.example/">C</a>`);
    expect(page.results).toEqual([
      { title: "A", url: "https://a.example/", snippet: "" },
      { title: "B", url: "https://b.example/", snippet: "about B" },
      { title: "C", url: "https://c.example/", snippet: "" },
    ]);
    expect(page.blocked).toBe(false);
  });
});
