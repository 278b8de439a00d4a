/** One archival memory on the memory page: read, edit its text in place, or forget it. */
import { formatTime } from "../../format.js";
import { t } from "../../i18n/index.js";
import type { MemoryRecord } from "../../types.js";
import { EntryActions, EntryEditor, useEditableEntry } from "./editable-entry.js";

export interface MemoryItemProps {
  memory: MemoryRecord;
  onSave: (text: string) => Promise<void>;
  onForget: () => Promise<void>;
}

const TYPE_LABEL = {
  semantic: "memory.type.semantic",
  episodic: "memory.type.episodic",
  procedural: "memory.type.procedural",
} as const;

/** The item. */
export function MemoryItem({ memory, onSave, onForget }: MemoryItemProps) {
  const entry = useEditableEntry({ text: memory.text, onSave, onForget });
  return (
    <li class="memory-item" data-testid="memory-item" data-memory-id={memory.id}>
      {entry.editing ? (
        <EntryEditor
          entry={entry}
          testId="memory"
          label={t("memory.textLabel")}
          rows={3}
          maxLength={2000}
          allowEmpty={false}
        />
      ) : (
        <p class="memory-text" data-testid="memory-text">
          {memory.text}
        </p>
      )}
      <div class="memory-meta">
        <span class="badge" title={t("memory.typeTitle", { type: memory.type })}>
          {t(TYPE_LABEL[memory.type])}
        </span>
        <span class="badge" data-testid="memory-agent">
          {memory.agentId ? `@${memory.agentId}` : t("memory.allAgents")}
        </span>
        <span class="muted" title={t("memory.importanceTitle", { value: memory.importance })}>
          {t("memory.importance", { value: memory.importance })}
        </span>
        <span class="muted">· {formatTime(memory.updatedAt)}</span>
        <EntryActions
          entry={entry}
          testId="memory"
          question={t("memory.forgetQuestion")}
          confirmLabel={t("memory.forget")}
        />
      </div>
    </li>
  );
}
