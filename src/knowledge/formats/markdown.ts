/**
 * Markdown into blocks, just enough of CommonMark for chunking: front matter, ATX and setext
 * headings, fenced code blocks (kept verbatim with their fences), and paragraphs (lists, tables and
 * quotes stay together as the paragraph they form). Inline markup is left as written.
 */
import type { Block, ExtractedDocument } from "../../attachments/extracted-document.js";

const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/;
const THEMATIC_BREAK = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const FRONT_TITLE = /^title:\s*["']?(.*?)["']?\s*$/m;

/** Strips a leading `---` front matter block; returns its title field, if any, and the rest. */
function frontMatter(text: string): { title?: string; body: string } {
  const match = /^---\r?\n([\s\S]*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/.exec(text);
  if (!match) return { body: text };
  const title = FRONT_TITLE.exec(match[1] ?? "")?.[1]?.trim();
  const body = text.slice(match[0].length);
  return title ? { title, body } : { body };
}

/** Parses Markdown source into heading, text and code blocks. */
export function parseMarkdown(source: string): ExtractedDocument {
  const { title: metaTitle, body } = frontMatter(source.replace(/^\uFEFF/, ""));
  const lines = body.split(/\r?\n/);
  const blocks: Block[] = [];
  let paragraph: string[] = [];
  const flush = () => {
    const text = paragraph.join("\n").trim();
    if (text !== "") blocks.push({ kind: "text", text });
    paragraph = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const marker = fence[1]!;
      const code = [line];
      let j = i + 1;
      // A fence closes with the same character, at least as long; an unclosed one runs to the end.
      for (; j < lines.length; j++) {
        code.push(lines[j]!);
        const close = lines[j]!.trim();
        if (close.startsWith(marker[0]!.repeat(marker.length)) && /^(`+|~+)$/.test(close)) break;
      }
      i = j;
      blocks.push({ kind: "code", text: code.join("\n") });
      continue;
    }
    const atx = ATX.exec(line);
    if (atx) {
      flush();
      const text = (atx[2] ?? "").trim();
      if (text !== "") blocks.push({ kind: "heading", text, level: atx[1]!.length });
      continue;
    }
    const setext = SETEXT.exec(line);
    if (setext && paragraph.length === 1 && !/^\s*[-*+]\s/.test(paragraph[0]!)) {
      const text = paragraph[0]!.trim();
      paragraph = [];
      blocks.push({ kind: "heading", text, level: setext[1]!.startsWith("=") ? 1 : 2 });
      continue;
    }
    if (line.trim() === "" || THEMATIC_BREAK.test(line)) flush();
    else paragraph.push(line);
  }
  flush();
  const firstHeading = blocks.find((b) => b.kind === "heading" && b.level === 1)?.text;
  const title = metaTitle ?? firstHeading;
  return title ? { title, blocks } : { blocks };
}
