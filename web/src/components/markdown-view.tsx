/** Renders Markdown as sanitised HTML (marked + highlight.js, then DOMPurify). */
import DOMPurify from "dompurify";
import { useMemo } from "preact/hooks";
import { markdownToHtml } from "../markdown.js";

let hooked = false;

/** Markdown to HTML that is safe to put into the DOM. */
export function renderMarkdown(text: string): string {
  if (!hooked) {
    // Links open in a new tab without giving the target page a handle on this one.
    DOMPurify.addHook("afterSanitizeAttributes", (node) => {
      if (node.tagName === "A") {
        node.setAttribute("target", "_blank");
        node.setAttribute("rel", "noopener noreferrer");
      }
    });
    hooked = true;
  }
  return DOMPurify.sanitize(markdownToHtml(text), { ADD_ATTR: ["target"] });
}

export interface MarkdownViewProps {
  text: string;
  class?: string;
  testId?: string;
}

/** A block of rendered Markdown. */
export function MarkdownView({ text, class: cls, testId }: MarkdownViewProps) {
  const html = useMemo(() => renderMarkdown(text), [text]);
  // Safe: the HTML comes from renderMarkdown, i.e. escaped by marked's renderer and then DOMPurify.
  return (
    <div
      class={`markdown${cls ? ` ${cls}` : ""}`}
      data-testid={testId}
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}
