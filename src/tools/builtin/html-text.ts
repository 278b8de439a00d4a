/** Turns an HTML page into readable text for a model: title first, then the main content with links. */
import type { HtmlToTextOptions } from "html-to-text";

export interface ReadablePage {
  title: string | undefined;
  text: string;
}

type Convert = (html: string, options?: HtmlToTextOptions) => string;

let converter: Promise<Convert> | undefined;

// html-to-text pulls in a parser and selector engine; load it only when a page is actually converted.
function loadConverter(): Promise<Convert> {
  converter ??= import("html-to-text").then((m) => m.convert);
  return converter;
}

const SKIPPED = [
  "script",
  "style",
  "noscript",
  "template",
  "svg",
  "iframe",
  "nav",
  "header",
  "footer",
  "img",
  "button",
  "select",
];

function optionsFor(baseUrl: string | undefined): HtmlToTextOptions {
  // An empty href makes html-to-text drop the link target; script links mean nothing to a reader.
  const absolute = (href: string) => {
    if (/^\s*javascript:/i.test(href)) return "";
    if (!baseUrl) return href;
    try {
      return new URL(href, baseUrl).href;
    } catch {
      return href;
    }
  };
  return {
    wordwrap: false,
    selectors: [
      ...SKIPPED.map((selector) => ({ selector, format: "skip" })),
      {
        selector: "a",
        options: { pathRewrite: absolute, hideLinkHrefIfSameAsText: true, noAnchorUrl: true },
      },
      ...["h1", "h2", "h3", "h4", "h5", "h6"].map((selector) => ({
        selector,
        options: { uppercase: false },
      })),
      {
        selector: "table",
        format: "dataTable",
        options: { uppercaseHeaderCells: false, maxColumnWidth: 60 },
      },
    ],
  };
}

/** Converts HTML to text without scripts, styles, navigation, headers and footers; links become `text [url]`. */
export async function htmlToReadableText(html: string, baseUrl?: string): Promise<ReadablePage> {
  const convert = await loadConverter();
  const titleMatch = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html);
  const rawTitle = titleMatch?.[1];
  const title = rawTitle ? convert(rawTitle, { wordwrap: false }).replace(/\s+/g, " ").trim() : undefined;
  const text = convert(html, optionsFor(baseUrl))
    .replace(/[ \t]+\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  return { title: title || undefined, text };
}
