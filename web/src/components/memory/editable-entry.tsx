/**
 * What a memory and a core block share on the memory page: Edit / Forget buttons with an inline
 * "are you sure", and an in-place editor of the text. `testId` prefixes the elements' test ids
 * (`<testId>-edit`, `-forget`, `-forget-yes`, `-edit-input`, `-edit-save`).
 */
import { useState } from "preact/hooks";
import { useAction } from "../../hooks.js";
import { t } from "../../i18n/index.js";

export interface EditableEntryOptions {
  text: string;
  onSave: (text: string) => Promise<void>;
  onForget: () => Promise<void>;
}

export interface EditableEntry {
  editing: boolean;
  draft: string;
  setDraft: (text: string) => void;
  startEditing: () => void;
  cancelEditing: () => void;
  save: () => Promise<void>;
  saving: boolean;
  confirming: boolean;
  setConfirming: (on: boolean) => void;
  forget: () => Promise<void>;
  forgetting: boolean;
}

/** The editing and forgetting state of one entry. */
export function useEditableEntry({ text, onSave, onForget }: EditableEntryOptions): EditableEntry {
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(text);
  const [confirming, setConfirming] = useState(false);
  const [save, saving] = useAction(async () => {
    await onSave(draft);
    setEditing(false);
  });
  const [forget, forgetting] = useAction(onForget);
  return {
    editing,
    draft,
    setDraft,
    startEditing: () => {
      setDraft(text);
      setEditing(true);
    },
    cancelEditing: () => {
      setDraft(text);
      setEditing(false);
    },
    save: async () => {
      await save();
    },
    saving,
    confirming,
    setConfirming,
    forget: async () => {
      await forget();
    },
    forgetting,
  };
}

/** Edit and Forget, or the inline confirmation once Forget was pressed; nothing while editing. */
export function EntryActions({
  entry,
  testId,
  question,
  confirmLabel,
}: {
  entry: EditableEntry;
  testId: string;
  question: string;
  confirmLabel: string;
}) {
  if (entry.editing) return null;
  if (entry.confirming) {
    return (
      <span class="memory-actions confirm-inline">
        {question}
        <button
          type="button"
          class="btn btn-small btn-danger"
          disabled={entry.forgetting}
          onClick={() => void entry.forget()}
          data-testid={`${testId}-forget-yes`}
        >
          {confirmLabel}
        </button>
        <button type="button" class="btn btn-small" onClick={() => entry.setConfirming(false)}>
          {t("memory.keep")}
        </button>
      </span>
    );
  }
  return (
    <span class="memory-actions">
      <button type="button" class="btn btn-small" onClick={entry.startEditing} data-testid={`${testId}-edit`}>
        {t("memory.edit")}
      </button>
      <button
        type="button"
        class="btn btn-small btn-danger"
        onClick={() => entry.setConfirming(true)}
        data-testid={`${testId}-forget`}
      >
        {t("memory.forget")}
      </button>
    </span>
  );
}

/** The in-place editor: the text, Cancel and Save. */
export function EntryEditor({
  entry,
  testId,
  label,
  rows,
  maxLength,
  allowEmpty,
}: {
  entry: EditableEntry;
  testId: string;
  label: string;
  rows: number;
  maxLength: number;
  allowEmpty: boolean;
}) {
  return (
    <form
      class="memory-edit"
      onSubmit={(e) => {
        e.preventDefault();
        void entry.save();
      }}
    >
      <textarea
        class="code-input"
        rows={rows}
        value={entry.draft}
        maxLength={maxLength}
        aria-label={label}
        onInput={(e) => entry.setDraft(e.currentTarget.value)}
        data-testid={`${testId}-edit-input`}
      />
      <div class="form-actions">
        <button type="button" class="btn btn-small" onClick={entry.cancelEditing}>
          {t("common.cancel")}
        </button>
        <button
          type="submit"
          class="btn btn-primary btn-small"
          disabled={entry.saving || (!allowEmpty && entry.draft.trim() === "")}
          data-testid={`${testId}-edit-save`}
        >
          {t("memory.save")}
        </button>
      </div>
    </form>
  );
}
