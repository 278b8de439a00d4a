/**
 * HTML into blocks: the readable text only (no scripts, styles, navigation, page header or footer,
 * forms, images), with headings and `<pre>` kept as Markdown headings and fences so the Markdown
 * parser recovers the structure.
 */
import { type FormatCallback, htmlToText, type SelectorDefinition } from "html-to-text";
import type { ExtractedDocument } from "../../attachments/extracted-document.js";
import { parseMarkdown } from "./markdown.js";

const SKIPPED = [
  "script",
  "style",
  "noscript",
  "template",
  "nav",
  "footer",
  "aside",
  "form",
  "button",
  "select",
  "svg",
  "canvas",
  "iframe",
  "img",
  "video",
  "audio",
  "body > header",
  "[role=navigation]",
  "[aria-hidden=true]",
];

function headingFormatter(level: number): FormatCallback {
  return (elem, walk, builder) => {
    builder.openBlock({ leadingLineBreaks: 2 });
    builder.addLiteral(`${"#".repeat(level)} `);
    walk(elem.children, builder);
    builder.closeBlock({ trailingLineBreaks: 2 });
  };
}

const fenceFormatter: FormatCallback = (elem, walk, builder) => {
  builder.openBlock({ leadingLineBreaks: 2, isPre: true });
  builder.addLiteral("```\n");
  walk(elem.children, builder);
  builder.addLiteral("\n```");
  builder.closeBlock({ trailingLineBreaks: 2 });
};

const formatters: Record<string, FormatCallback> = { fence: fenceFormatter };
const selectors: SelectorDefinition[] = [
  { selector: "pre", format: "fence" },
  { selector: "a", options: { ignoreHref: true } },
  { selector: "table", format: "dataTable" },
  ...SKIPPED.map((selector) => ({ selector, format: "skip" })),
];
for (let level = 1; level <= 6; level++) {
  formatters[`h${level}`] = headingFormatter(level);
  selectors.push({ selector: `h${level}`, format: `h${level}` });
}

const TITLE = /<title[^>]*>([\s\S]*?)<\/title>/i;

function decodeEntities(text: string): string {
  return htmlToText(text, { wordwrap: false }).trim();
}

/** Extracts the readable text of an HTML page as blocks; the title comes from `<title>` or the first h1. */
export function parseHtml(html: string): ExtractedDocument {
  const text = htmlToText(html, { wordwrap: false, formatters, selectors });
  const parsed = parseMarkdown(text);
  const rawTitle = TITLE.exec(html)?.[1];
  const title = rawTitle ? decodeEntities(rawTitle.replace(/\s+/g, " ")) : undefined;
  return title ? { ...parsed, title } : parsed;
}
