import { t } from "./i18n/index.js";

/**
 * Draws the Mermaid diagrams of rendered Markdown: the `mermaid` library is loaded (its own chunk)
 * only when a message has a diagram, runs with `securityLevel: "strict"`, and each block gets a
 * toggle between the diagram and its source; a source that does not parse stays shown, with why.
 */

type MermaidApi = typeof import("mermaid")["default"];

let loading: Promise<MermaidApi> | undefined;
let sequence = 0;

function isDark(): boolean {
  const theme = document.documentElement.dataset.theme;
  if (theme === "dark") return true;
  if (theme === "light") return false;
  return typeof matchMedia === "function" && matchMedia("(prefers-color-scheme: dark)").matches;
}

function loadMermaid(): Promise<MermaidApi> {
  loading ??= import("mermaid").then(({ default: mermaid }) => {
    mermaid.initialize({
      startOnLoad: false,
      securityLevel: "strict",
      theme: isDark() ? "dark" : "default",
    });
    return mermaid;
  });
  return loading;
}

function toggleButton(block: HTMLElement): HTMLButtonElement {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "code-copy mermaid-toggle";
  button.dataset.testid = "mermaid-toggle";
  button.textContent = t("diagram.showSource");
  button.addEventListener("click", () => {
    const showing = block.dataset.view === "source";
    block.dataset.view = showing ? "diagram" : "source";
    button.textContent = showing ? t("diagram.showSource") : t("diagram.showDiagram");
  });
  return button;
}

async function draw(block: HTMLElement, mermaid: MermaidApi): Promise<void> {
  const source = block.querySelector("code")?.textContent ?? "";
  // This draw's own id: others (a streaming answer redraws) may start while it waits.
  sequence += 1;
  const id = `mermaid-${sequence}`;
  try {
    const { svg } = await mermaid.render(id, source);
    const diagram = document.createElement("div");
    diagram.className = "mermaid-diagram";
    // The SVG comes from mermaid with securityLevel "strict" (its own DOMPurify pass, no scripts).
    diagram.innerHTML = svg;
    const head = document.createElement("div");
    head.className = "code-head";
    const label = document.createElement("span");
    label.className = "code-lang";
    label.textContent = t("diagram.label");
    head.append(label, toggleButton(block));
    block.prepend(head, diagram);
    block.dataset.view = "diagram";
    block.dataset.mermaid = "drawn";
  } catch (err) {
    const note = document.createElement("p");
    note.className = "mermaid-error muted";
    note.dataset.testid = "mermaid-error";
    const reason = err instanceof Error ? err.message.split("\n")[0] : String(err);
    note.textContent = t("diagram.failed", { reason: reason ?? "" });
    block.append(note);
    block.dataset.mermaid = "failed";
    // mermaid leaves an error graphic in the body on a failed render; drop it.
    document.getElementById(`d${id}`)?.remove();
  }
}

/** Draws every diagram under `root` still waiting to be drawn. */
export function drawMermaidBlocks(root: HTMLElement): void {
  const pending = [...root.querySelectorAll<HTMLElement>('.mermaid-block[data-mermaid="pending"]')];
  if (pending.length === 0) return;
  for (const block of pending) block.dataset.mermaid = "drawing";
  loadMermaid()
    .then(async (mermaid) => {
      for (const block of pending) if (block.isConnected) await draw(block, mermaid);
    })
    .catch(() => {
      for (const block of pending) block.dataset.mermaid = "failed";
    });
}
