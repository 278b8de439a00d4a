import { describe, expect, it } from "vitest";
import { parsePdf } from "../../src/attachments/pdf-text.js";
import { parseCode } from "../../src/knowledge/formats/code.js";
import { formatOf, formatOfMime, isPersonaFile, looksLikeText } from "../../src/knowledge/formats/detect.js";
import { extractDocument } from "../../src/knowledge/formats/extract.js";
import { parseHtml } from "../../src/knowledge/formats/html.js";
import { parseMarkdown } from "../../src/knowledge/formats/markdown.js";
import { parsePlainText } from "../../src/knowledge/formats/plain-text.js";
import { minimalPdf } from "./helpers.js";

describe("Markdown", () => {
  it("finds front matter, ATX and setext headings, paragraphs and whole fenced code blocks", () => {
    const doc = parseMarkdown(
      [
        "---",
        "title: Setup Guide",
        "tags: [a]",
        "---",
        "# Install",
        "",
        "Run the installer.",
        "It takes a minute.",
        "",
        "```bash",
        "npm install",
        "",
        "npm run build",
        "```",
        "",
        "Linux notes",
        "-----------",
        "- apt works",
        "- so does dnf",
        "",
        "***",
        "~~~",
        "unclosed fence keeps everything",
        "# not a heading inside",
      ].join("\n"),
    );
    expect(doc.title).toBe("Setup Guide");
    expect(doc.blocks).toEqual([
      { kind: "heading", text: "Install", level: 1 },
      { kind: "text", text: "Run the installer.\nIt takes a minute." },
      { kind: "code", text: "```bash\nnpm install\n\nnpm run build\n```" },
      { kind: "heading", text: "Linux notes", level: 2 },
      { kind: "text", text: "- apt works\n- so does dnf" },
      { kind: "code", text: "~~~\nunclosed fence keeps everything\n# not a heading inside" },
    ]);
  });

  it("takes the first level-1 heading as title when there is no front matter", () => {
    expect(parseMarkdown("intro\n\n## Sub\n\n# Real Title ##\n").title).toBe("Real Title");
    expect(parseMarkdown("no headings").title).toBeUndefined();
  });
});

describe("HTML", () => {
  it("keeps the readable text with its headings and code, and drops scripts, styles, navigation and footers", () => {
    const doc = parseHtml(`<!doctype html><html><head><title>Wing &amp; Flap</title>
      <style>.x { color: red }</style><script>var secret = "do-not-index";</script></head>
      <body><header><a href="/">Home</a> | <a href="/about">About</a></header>
      <nav><ul><li>Menu item</li></ul></nav>
      <main><h1>Lift</h1><p>Lift rises with <b>angle</b> of <a href="https://x">attack</a>.</p>
      <h2>Stall</h2><p>Past the critical angle the flow separates.</p>
      <pre><code>lift = 0.5 * rho * v * v * S * CL
drag = 0.5 * rho * v * v * S * CD</code></pre></main>
      <aside>Advertisement</aside><footer>Copyright 2024</footer></body></html>`);
    expect(doc.title).toBe("Wing & Flap");
    const text = doc.blocks.map((b) => b.text).join("\n");
    expect(doc.blocks.slice(0, 4)).toEqual([
      { kind: "heading", text: "Lift", level: 1 },
      { kind: "text", text: "Lift rises with angle of attack." },
      { kind: "heading", text: "Stall", level: 2 },
      { kind: "text", text: "Past the critical angle the flow separates." },
    ]);
    expect(doc.blocks[4]).toEqual({
      kind: "code",
      text: "```\nlift = 0.5 * rho * v * v * S * CL\ndrag = 0.5 * rho * v * v * S * CD\n```",
    });
    for (const hidden of [
      "do-not-index",
      "color",
      "Menu item",
      "Home",
      "Advertisement",
      "Copyright",
      "https://x",
    ]) {
      expect(text).not.toContain(hidden);
    }
  });
});

describe("plain text and code", () => {
  it("splits plain text at blank lines", () => {
    expect(parsePlainText("\uFEFFone\nline two\n\n  \nthree\n").blocks).toEqual([
      { kind: "text", text: "one\nline two" },
      { kind: "text", text: "three" },
    ]);
  });

  it("keeps functions whole across inner blank lines and labels blocks with their declarations", () => {
    const source = [
      "import { x } from './x.js';",
      "",
      "/** Adds. */",
      "export function add(a: number, b: number): number {",
      "  const sum = a + b;",
      "",
      "  return sum;",
      "}",
      "",
      "class Counter {",
      "  n = 0;",
      "",
      "  inc() {",
      "    this.n++;",
      "  }",
      "}",
    ].join("\n");
    const doc = parseCode(source);
    expect(doc.blocks).toEqual([
      { kind: "code", text: "import { x } from './x.js';" },
      {
        kind: "code",
        text: "/** Adds. */\nexport function add(a: number, b: number): number {\n  const sum = a + b;\n\n  return sum;\n}",
        label: "export function add(a: number, b: number): number",
      },
      {
        kind: "code",
        text: "class Counter {\n  n = 0;\n\n  inc() {\n    this.n++;\n  }\n}",
        label: "class Counter",
      },
    ]);
    expect(parseCode("def area(r):\n    return 3.14 * r * r\n").blocks[0]?.label).toBe("def area(r)");
  });
});

describe("PDF", () => {
  it("extracts each page's text with its page number and the document title", async () => {
    const pdf = minimalPdf(
      [["Boundary layer transition", "occurs near the leading edge."], ["Page two discusses shock waves."]],
      "Aero Notes",
    );
    const doc = await parsePdf(pdf, "notes.pdf");
    expect(doc.pages).toBe(2);
    expect(doc.title).toBe("Aero Notes");
    expect(doc.blocks).toEqual([
      { kind: "text", text: "Boundary layer transition occurs near the leading edge.", page: 1 },
      { kind: "text", text: "Page two discusses shock waves.", page: 2 },
    ]);
  });

  it("reports a corrupt PDF as a tool_failed error naming the file", async () => {
    const bad = Buffer.from("%PDF-1.4\n1 0 obj << /Type /Catalog >> garbage without xref\n");
    await expect(parsePdf(bad, "broken.pdf")).rejects.toMatchObject({
      code: "tool_failed",
      message: expect.stringContaining("broken.pdf is not a readable PDF"),
    });
  });

  it("is reached through extractDocument for the pdf kind", async () => {
    const doc = await extractDocument(minimalPdf([["hello pdf"]]), "pdf", "x.pdf");
    expect(doc.blocks[0]).toMatchObject({ text: "hello pdf", page: 1 });
  });
});

describe("format detection", () => {
  it("maps extensions and declared mime types to formats", () => {
    expect(formatOf("a/README.md")).toEqual({ mime: "text/markdown", kind: "markdown" });
    expect(formatOf("page.HTM")).toEqual({ mime: "text/html", kind: "html" });
    expect(formatOf("paper.pdf")).toEqual({ mime: "application/pdf", kind: "pdf" });
    expect(formatOf("main.rs")).toEqual({ mime: "text/x-rust", kind: "code" });
    expect(formatOf("Dockerfile")).toEqual({ mime: "text/x-dockerfile", kind: "code" });
    expect(formatOf("photo.png")).toBeUndefined();
    expect(formatOfMime("text/html; charset=utf-8", "upload.bin")).toEqual({
      mime: "text/html",
      kind: "html",
    });
    expect(formatOfMime(undefined, "notes.txt")).toEqual({ mime: "text/plain", kind: "text" });
    expect(looksLikeText(new Uint8Array([104, 105]))).toBe(true);
    expect(looksLikeText(new Uint8Array([104, 0, 105]))).toBe(false);
  });

  it("recognises persona files", () => {
    for (const name of ["SOUL.md", "agents/writer/soul.md", "bob.soul.md", "PERSONA.md", "AGENTS.md"]) {
      expect(isPersonaFile(name)).toBe(true);
    }
    for (const name of ["soul-music.md", "README.md", "soul.txt"]) expect(isPersonaFile(name)).toBe(false);
  });
});
