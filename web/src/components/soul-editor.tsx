/**
 * SOUL.md editor: a textarea with a Markdown preview, and a warning when the persona is empty or
 * missing (the agent then runs without one). Controlled, so the agent form can reuse it on create.
 */
import { useState } from "preact/hooks";
import { t } from "../i18n/index.js";
import type { SoulFile } from "../types.js";
import { MarkdownView } from "./markdown-view.js";

export interface SoulEditorProps {
  value: string;
  onChange: (value: string) => void;
  /** The stored file's status; for unsaved text the warning follows the text itself. */
  status?: SoulFile["status"] | undefined;
  readOnly?: boolean;
}

/** The persona editor. */
export function SoulEditor({ value, onChange, status, readOnly }: SoulEditorProps) {
  const [tab, setTab] = useState<"edit" | "preview">("edit");
  const shownStatus = status === "missing" ? "missing" : value.trim() === "" ? "empty" : "ok";
  return (
    <div class="soul-editor" data-testid="soul-editor">
      {shownStatus !== "ok" && (
        <p class="notice notice-warning" data-testid="soul-warning" data-status={shownStatus}>
          {shownStatus === "missing" ? t("agents.soulMissing") : t("agents.soulEmpty")}
        </p>
      )}
      <div class="tabs" role="tablist">
        <button
          type="button"
          role="tab"
          aria-selected={tab === "edit"}
          class={tab === "edit" ? "active" : ""}
          onClick={() => setTab("edit")}
          data-testid="soul-tab-edit"
        >
          {t("agents.soulEdit")}
        </button>
        <button
          type="button"
          role="tab"
          aria-selected={tab === "preview"}
          class={tab === "preview" ? "active" : ""}
          onClick={() => setTab("preview")}
          data-testid="soul-tab-preview"
        >
          {t("agents.soulPreview")}
        </button>
      </div>
      {tab === "edit" ? (
        <textarea
          class="code-input soul-input"
          rows={14}
          value={value}
          readOnly={readOnly}
          spellcheck={true}
          placeholder={t("agents.soulPlaceholder")}
          onInput={(e) => onChange(e.currentTarget.value)}
          data-testid="soul-input"
        />
      ) : (
        <div class="soul-preview">
          {value.trim() ? (
            <MarkdownView text={value} testId="soul-preview" />
          ) : (
            <p class="muted">{t("agents.soulNothing")}</p>
          )}
        </div>
      )}
    </div>
  );
}
