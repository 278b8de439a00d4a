/** One core memory block (always in the agent's context): read, rewrite, or delete it. */
import { formatTime } from "../../format.js";
import { t } from "../../i18n/index.js";
import type { CoreBlock } from "../../types.js";
import { EntryActions, EntryEditor, useEditableEntry } from "./editable-entry.js";

export interface CoreBlockItemProps {
  block: CoreBlock;
  onSave: (value: string) => Promise<void>;
  onForget: () => Promise<void>;
}

/** The block. */
export function CoreBlockItem({ block, onSave, onForget }: CoreBlockItemProps) {
  const entry = useEditableEntry({ text: block.value, onSave, onForget });
  return (
    <li class="core-block" data-testid="core-block" data-label={block.label}>
      <div class="memory-meta">
        <strong class="core-label">{block.label}</strong>
        <span class="badge">{block.agentId ? `@${block.agentId}` : t("memory.allAgents")}</span>
        <span class="muted">
          {t("memory.characters", { used: block.value.length, limit: block.limit })} ·{" "}
          {formatTime(block.updatedAt)}
        </span>
        <EntryActions
          entry={entry}
          testId="core"
          question={t("memory.deleteBlock")}
          confirmLabel={t("common.delete")}
        />
      </div>
      {entry.editing ? (
        <EntryEditor
          entry={entry}
          testId="core"
          label={t("memory.blockLabel", { label: block.label })}
          rows={Math.min(12, Math.max(3, entry.draft.split("\n").length + 1))}
          maxLength={block.limit}
          allowEmpty
        />
      ) : (
        <p class="core-value" data-testid="core-value">
          {block.value || <span class="muted">{t("memory.blockEmpty")}</span>}
        </p>
      )}
    </li>
  );
}
