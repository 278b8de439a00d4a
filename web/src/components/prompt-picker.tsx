/**
 * MCP prompts in the composer: typing `/` at the start offers the prompts of the MCP servers the
 * person may use (`/server:prompt`); picking one asks for its arguments in a small form, and the
 * prompt's text is put into the composer for editing before it is sent.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { errorText } from "../api.js";
import { useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import { isImeKey } from "../ime.js";
import type { McpPromptInfo } from "../types.js";

/** The query after a leading `/` (no spaces yet), or undefined when the text is no slash command. */
export function slashQuery(text: string): string | undefined {
  return /^\/(\S*)$/.exec(text)?.[1];
}

export function promptKey(prompt: McpPromptInfo): string {
  return `${prompt.server}:${prompt.name}`;
}

/** The prompts, loaded once the first time a `/` is typed (none where MCP is unavailable). */
export function usePrompts(wanted: boolean): McpPromptInfo[] {
  const { api } = useServices();
  const [prompts, setPrompts] = useState<McpPromptInfo[]>([]);
  const asked = useRef(false);
  useEffect(() => {
    if (!wanted || asked.current) return;
    asked.current = true;
    api
      .listMcpPrompts()
      .then(setPrompts)
      .catch(() => setPrompts([]));
  }, [wanted, api]);
  return prompts;
}

export function matchingPrompts(prompts: McpPromptInfo[], query: string): McpPromptInfo[] {
  const q = query.toLowerCase();
  return prompts.filter((p) => promptKey(p).toLowerCase().includes(q));
}

/** The list of prompts under the typed `/query`. */
export function PromptMenu({
  items,
  index,
  onPick,
}: {
  items: McpPromptInfo[];
  index: number;
  onPick: (prompt: McpPromptInfo) => void;
}) {
  return (
    <div class="mention-menu prompt-menu" role="listbox" aria-label="MCP prompts" data-testid="prompt-menu">
      {items.map((prompt, i) => (
        <div
          key={promptKey(prompt)}
          id={`prompt-${i}`}
          role="option"
          tabIndex={-1}
          aria-selected={i === index}
          class={i === index ? "selected" : ""}
          data-testid="prompt-option"
          data-prompt={promptKey(prompt)}
          onMouseDown={(e) => {
            // Keep focus (and the caret) in the textarea.
            e.preventDefault();
            onPick(prompt);
          }}
        >
          <strong>/{promptKey(prompt)}</strong>
          {prompt.arguments.length > 0 && (
            <span class="muted">
              {" "}
              {prompt.arguments.map((a) => (a.required ? `<${a.name}>` : `[${a.name}]`)).join(" ")}
            </span>
          )}
          {prompt.description && <span class="muted prompt-desc"> — {prompt.description}</span>}
        </div>
      ))}
    </div>
  );
}

/** Asks for a prompt's arguments, then hands its text on. */
export function PromptArguments({
  prompt,
  onText,
  onClose,
}: {
  prompt: McpPromptInfo;
  onText: (text: string) => void;
  onClose: () => void;
}) {
  const { api } = useServices();
  const [values, setValues] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const missing = prompt.arguments.filter((a) => a.required && !values[a.name]?.trim());

  const submit = async (e: Event) => {
    e.preventDefault();
    if (missing.length > 0) {
      setProblem(t("prompt.fillIn", { names: missing.map((a) => a.name).join(", ") }));
      return;
    }
    setBusy(true);
    setProblem(undefined);
    try {
      const args: Record<string, string> = {};
      for (const [name, value] of Object.entries(values)) if (value.trim()) args[name] = value.trim();
      onText((await api.getMcpPrompt(prompt.server, prompt.name, args)).text);
    } catch (err) {
      setProblem(errorText(err));
      setBusy(false);
    }
  };

  return (
    <div class="prompt-args" data-testid="prompt-args" data-prompt={promptKey(prompt)}>
      <p class="prompt-args-title">
        <strong>/{promptKey(prompt)}</strong>
        {prompt.description && <span class="muted"> — {prompt.description}</span>}
      </p>
      {prompt.arguments.map((arg, i) => (
        <label key={arg.name} class="elicit-field">
          <span class="elicit-label">
            {arg.name}
            {arg.required && <span class="elicit-required"> *</span>}
            {arg.description && <span class="muted"> — {arg.description}</span>}
          </span>
          <input
            type="text"
            value={values[arg.name] ?? ""}
            // The first field takes the focus, so the arguments can be typed at once.
            // biome-ignore lint/a11y/noAutofocus: the form opens because the person picked a prompt
            autoFocus={i === 0}
            onInput={(e) => {
              const value = (e.currentTarget as HTMLInputElement).value;
              setValues((v) => ({ ...v, [arg.name]: value }));
              setProblem(undefined);
            }}
            onKeyDown={(e) => {
              if (e.key === "Enter" && !isImeKey(e)) void submit(e);
              if (e.key === "Escape") onClose();
            }}
            data-testid={`prompt-arg-${arg.name}`}
          />
        </label>
      ))}
      {problem && (
        <p class="elicit-error" role="alert" data-testid="prompt-problem">
          {problem}
        </p>
      )}
      <div class="elicit-actions">
        <button
          type="button"
          class="btn btn-small btn-primary"
          disabled={busy}
          onClick={(e) => void submit(e)}
          data-testid="prompt-insert"
        >
          {t("prompt.use")}
        </button>
        <button type="button" class="btn btn-small" onClick={onClose} data-testid="prompt-close">
          {t("common.cancel")}
        </button>
      </div>
    </div>
  );
}
