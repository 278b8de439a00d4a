/** One archival memory on the memory page: read, edit its text in place, or forget it. */
import { formatTime } from "../../format.js";
import type { MemoryRecord } from "../../types.js";
import { EntryActions, EntryEditor, useEditableEntry } from "./editable-entry.js";

export interface MemoryItemProps {
  memory: MemoryRecord;
  onSave: (text: string) => Promise<void>;
  onForget: () => Promise<void>;
}

const TYPE_LABEL: Record<MemoryRecord["type"], string> = {
  semantic: "fact",
  episodic: "event",
  procedural: "how-to",
};

/** The item. */
export function MemoryItem({ memory, onSave, onForget }: MemoryItemProps) {
  const entry = useEditableEntry({ text: memory.text, onSave, onForget });
  return (
    <li class="memory-item" data-testid="memory-item" data-memory-id={memory.id}>
      {entry.editing ? (
        <EntryEditor
          entry={entry}
          testId="memory"
          label="Memory text"
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
        <span class="badge" title={`type: ${memory.type}`}>
          {TYPE_LABEL[memory.type]}
        </span>
        <span class="badge" data-testid="memory-agent">
          {memory.agentId ? `@${memory.agentId}` : "every agent"}
        </span>
        <span class="muted" title={`importance ${memory.importance} of 10`}>
          importance {memory.importance}
        </span>
        <span class="muted">· {formatTime(memory.updatedAt)}</span>
        <EntryActions entry={entry} testId="memory" question="Forget this for good?" confirmLabel="Forget" />
      </div>
    </li>
  );
}
