/** Renders Markdown as sanitised HTML (marked + highlight.js, then DOMPurify). */
import DOMPurify from "dompurify";
import { useEffect, useMemo, useRef } from "preact/hooks";
import { copyText } from "../clipboard.js";
import { t } from "../i18n/index.js";
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
  const root = useRef<HTMLDivElement>(null);
  const hasDiagram = html.includes("mermaid-block");
  useEffect(() => {
    // Only a message with a diagram loads the (large) mermaid chunk.
    if (hasDiagram && root.current) {
      const el = root.current;
      void import("../mermaid-blocks.js").then(({ drawMermaidBlocks }) => drawMermaidBlocks(el));
    }
  }, [html, hasDiagram]);
  // A code block's Copy button (rendered in the HTML; one handler for all of them).
  const onClick = (event: MouseEvent) => {
    const button = event.target instanceof Element ? event.target.closest(".code-copy") : null;
    if (!(button instanceof HTMLButtonElement) || button.classList.contains("mermaid-toggle")) return;
    const code = button.closest(".code-block")?.querySelector("pre code")?.textContent ?? "";
    copyText(code).then(
      () => {
        button.textContent = `✓ ${t("message.copied")}`;
        setTimeout(() => {
          button.textContent = t("message.copy");
        }, 1500);
      },
      () => {
        button.textContent = t("message.copyFailedShort");
      },
    );
  };
  // Safe: the HTML comes from renderMarkdown, i.e. escaped by marked's renderer and then DOMPurify.
  return (
    // biome-ignore lint/a11y/useKeyWithClickEvents: the click lands on a real <button> inside (keyboard works).
    // biome-ignore lint/a11y/noStaticElementInteractions: delegation to the code blocks' buttons.
    <div
      ref={root}
      class={`markdown${cls ? ` ${cls}` : ""}`}
      data-testid={testId}
      onClick={onClick}
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}
