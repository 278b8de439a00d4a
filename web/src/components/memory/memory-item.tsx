/** One archival memory on the memory page: read, edit its text in place, or forget it. */
import { useState } from "preact/hooks";
import { formatTime } from "../../format.js";
import { useAction } from "../../hooks.js";
import type { MemoryRecord } from "../../types.js";

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
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(memory.text);
  const [confirming, setConfirming] = useState(false);
  const [save, saving] = useAction(async () => {
    await onSave(draft);
    setEditing(false);
  });
  const [forget, forgetting] = useAction(onForget);
  return (
    <li class="memory-item" data-testid="memory-item" data-memory-id={memory.id}>
      {editing ? (
        <form
          class="memory-edit"
          onSubmit={(e) => {
            e.preventDefault();
            void save();
          }}
        >
          <textarea
            class="code-input"
            rows={3}
            value={draft}
            maxLength={2000}
            aria-label="Memory text"
            onInput={(e) => setDraft(e.currentTarget.value)}
            data-testid="memory-edit-input"
          />
          <div class="form-actions">
            <button
              type="button"
              class="btn btn-small"
              onClick={() => {
                setDraft(memory.text);
                setEditing(false);
              }}
            >
              Cancel
            </button>
            <button
              type="submit"
              class="btn btn-primary btn-small"
              disabled={saving || draft.trim() === ""}
              data-testid="memory-edit-save"
            >
              Save
            </button>
          </div>
        </form>
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
        {!editing && !confirming && (
          <span class="memory-actions">
            <button
              type="button"
              class="btn btn-small"
              onClick={() => {
                setDraft(memory.text);
                setEditing(true);
              }}
              data-testid="memory-edit"
            >
              Edit
            </button>
            <button
              type="button"
              class="btn btn-small btn-danger"
              onClick={() => setConfirming(true)}
              data-testid="memory-forget"
            >
              Forget
            </button>
          </span>
        )}
        {confirming && (
          <span class="memory-actions confirm-inline">
            Forget this for good?
            <button
              type="button"
              class="btn btn-small btn-danger"
              disabled={forgetting}
              onClick={() => void forget()}
              data-testid="memory-forget-yes"
            >
              Forget
            </button>
            <button type="button" class="btn btn-small" onClick={() => setConfirming(false)}>
              Keep
            </button>
          </span>
        )}
      </div>
    </li>
  );
}
