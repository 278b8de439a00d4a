import { describe, expect, it } from "vitest";
import { escapeHtml, highlightCode, isSafeUrl, markdownToHtml } from "../../web/src/markdown.js";

describe("markdownToHtml", () => {
  it("renders GFM: emphasis, lists, tables and line breaks", () => {
    const html = markdownToHtml(
      "**bold** and _it_\nnext line\n\n- a\n- b\n\n| x | y |\n|---|---|\n| 1 | 2 |",
    );
    expect(html).toContain("<strong>bold</strong>");
    expect(html).toContain("<em>it</em>");
    expect(html).toContain("<br>");
    expect(html).toMatch(/<ul>\s*<li>a<\/li>\s*<li>b<\/li>\s*<\/ul>/);
    expect(html).toContain("<table>");
  });

  it("highlights registered languages, by name or alias", () => {
    const ts = markdownToHtml("```ts\nconst answer: number = 42;\n```");
    expect(ts).toContain('<code class="hljs language-ts">');
    expect(ts).toContain('<span class="hljs-keyword">const</span>');
    expect(ts).toContain('<span class="hljs-number">42</span>');
    const py = markdownToHtml("```python\ndef f():\n    return 'x'\n```");
    expect(py).toContain('<span class="hljs-keyword">def</span>');
    expect(py).toContain('<span class="hljs-string">&#x27;x&#x27;</span>');
  });

  it("gives code blocks a language label and a copy button; mermaid blocks stay escaped source for the view to draw", () => {
    const ts = markdownToHtml("```ts\nconst a = 1;\n```");
    expect(ts).toContain(
      '<span class="code-lang">ts</span><button type="button" class="code-copy">Copy</button>',
    );
    expect(markdownToHtml("```\nplain\n```")).toContain('<span class="code-lang">text</span>');
    const diagram = markdownToHtml("```mermaid\ngraph TD\n  A-->B<script>\n```");
    expect(diagram).toContain('class="code-block mermaid-block" data-mermaid="pending"');
    expect(diagram).toContain("A--&gt;B&lt;script&gt;");
    expect(diagram).not.toContain("<script>");
  });

  it("escapes code in unknown languages instead of highlighting it", () => {
    const html = markdownToHtml("```brainfuck\n<b>++</b>\n```");
    expect(html).toContain('<code class="hljs">&lt;b&gt;++&lt;/b&gt;');
    expect(html).not.toContain("<b>");
  });

  it("shows raw HTML as text, block and inline", () => {
    const html = markdownToHtml('<script>alert(1)</script>\n\nhi <img src=x onerror="alert(2)"> there');
    expect(html).not.toContain("<script");
    expect(html).not.toContain("<img");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).toContain("&lt;img src=x onerror=&quot;alert(2)&quot;&gt;");
  });

  it("drops unsafe link targets but keeps the link text", () => {
    const html = markdownToHtml("[click](javascript:alert(1)) and [ok](https://example.com/a?b=1&c=2)");
    expect(html).not.toContain("javascript:");
    expect(html).toContain("click");
    expect(html).toContain(
      '<a href="https://example.com/a?b=1&amp;c=2" target="_blank" rel="noopener noreferrer">ok</a>',
    );
  });

  it("turns images into links, since the CSP blocks remote images", () => {
    const html = markdownToHtml("![diagram](https://example.com/d.png)");
    expect(html).not.toContain("<img");
    expect(html).toContain('href="https://example.com/d.png"');
    expect(html).toContain("diagram");
  });

  it("links bare URLs (GFM autolinks)", () => {
    expect(markdownToHtml("see https://dimsum.dev now")).toContain('<a href="https://dimsum.dev"');
  });
});

describe("isSafeUrl", () => {
  it("allows http(s), mailto and relative URLs", () => {
    for (const url of [
      "https://a.b",
      "http://a.b/c",
      "mailto:x@y.z",
      "/api/x",
      "#top",
      "docs/a.md",
      "?q=1",
    ]) {
      expect(isSafeUrl(url), url).toBe(true);
    }
  });

  it("rejects other schemes, even when disguised with case or control characters", () => {
    for (const url of [
      "javascript:alert(1)",
      "JavaScript:alert(1)",
      "java\tscript:alert(1)",
      " javascript:x",
      "data:text/html,x",
      "vbscript:x",
    ]) {
      expect(isSafeUrl(url), url).toBe(false);
    }
  });
});

describe("helpers", () => {
  it("escapeHtml escapes the five HTML metacharacters", () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe("&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  });

  it("highlightCode reports the language used, or none", () => {
    expect(highlightCode("x = 1", "bash").language).toBe("bash");
    expect(highlightCode("x = 1", "cobol")).toEqual({ html: "x = 1" });
    expect(highlightCode("{}", undefined)).toEqual({ html: "{}" });
  });
});
