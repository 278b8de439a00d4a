/// <reference path="./hljs-languages.d.ts" />
/**
 * Markdown to HTML for chat messages and personas: GFM with line breaks, code highlighted by
 * highlight.js (a few common languages only, to keep the bundle small), raw HTML shown as text, and
 * links limited to http(s), mailto and relative URLs. The result is still passed through DOMPurify
 * before it reaches the DOM (see components/markdown-view.tsx); this layer makes it safe on its own.
 */
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import python from "highlight.js/lib/languages/python";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import { Marked, type Tokens } from "marked";
import { t } from "./i18n/index.js";

const languages = { bash, css, diff, javascript, json, python, sql, typescript, xml, yaml };
for (const [name, language] of Object.entries(languages)) hljs.registerLanguage(name, language);

/** Names (and aliases) of the languages code blocks are highlighted in. */
export function highlightedLanguages(): string[] {
  return hljs.listLanguages();
}

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Escapes text for use in HTML content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/** Whether a link target is harmless: http(s), mailto, or a relative URL (no other scheme). */
export function isSafeUrl(href: string): boolean {
  // Browsers ignore control characters and whitespace inside a scheme ("java\tscript:"); so do we.
  const compact = [...href].filter((c) => c.charCodeAt(0) > 0x20 && c.charCodeAt(0) !== 0x7f).join("");
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(compact);
  if (!scheme) return true;
  return ["http", "https", "mailto"].includes((scheme[1] ?? "").toLowerCase());
}

/** Highlighted HTML for a code block, or escaped text when the language is not registered. */
export function highlightCode(code: string, lang: string | undefined): { html: string; language?: string } {
  const language = (lang ?? "").trim().split(/\s+/)[0]?.toLowerCase() ?? "";
  if (language && hljs.getLanguage(language)) {
    return { html: hljs.highlight(code, { language, ignoreIllegals: true }).value, language };
  }
  return { html: escapeHtml(code) };
}

const marked = new Marked({ gfm: true, breaks: true, async: false });

marked.use({
  renderer: {
    code({ text, lang }: Tokens.Code): string {
      const named = (lang ?? "").trim().split(/\s+/)[0]?.toLowerCase() ?? "";
      // A diagram: its source, which the view draws with mermaid (loaded only then).
      if (named === "mermaid") {
        return `<div class="code-block mermaid-block" data-mermaid="pending"><pre><code class="language-mermaid">${escapeHtml(text)}</code></pre></div>\n`;
      }
      const { html, language } = highlightCode(text, lang);
      const cls = language ? `hljs language-${escapeHtml(language)}` : "hljs";
      // A head with the language and a copy button (the view handles its click).
      const label = escapeHtml(named || "text");
      const head = `<div class="code-head"><span class="code-lang">${label}</span><button type="button" class="code-copy">${escapeHtml(t("message.copy"))}</button></div>`;
      return `<div class="code-block">${head}<pre><code class="${cls}">${html}</code></pre></div>\n`;
    },
    html({ text }: Tokens.HTML | Tokens.Tag): string {
      return escapeHtml(text);
    },
    link({ href, title, tokens }: Tokens.Link): string {
      const inner = this.parser.parseInline(tokens);
      if (!isSafeUrl(href)) return inner;
      const titleAttr = title ? ` title="${escapeHtml(title)}"` : "";
      return `<a href="${escapeHtml(href)}"${titleAttr} target="_blank" rel="noopener noreferrer">${inner}</a>`;
    },
    image({ href, text }: Tokens.Image): string {
      // The CSP only allows same-origin images; show remote ones as links instead of broken images.
      const label = escapeHtml(text || href);
      if (!isSafeUrl(href)) return label;
      return `<a href="${escapeHtml(href)}" target="_blank" rel="noopener noreferrer">🖼 ${label}</a>`;
    },
  },
});

/** Markdown to HTML (unsanitised by DOMPurify; see the module comment). */
export function markdownToHtml(markdown: string): string {
  return marked.parse(markdown, { async: false });
}
