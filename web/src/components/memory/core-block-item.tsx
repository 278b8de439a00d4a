/** One core memory block (always in the agent's context): read, rewrite, or delete it. */
import { useState } from "preact/hooks";
import { formatTime } from "../../format.js";
import { useAction } from "../../hooks.js";
import type { CoreBlock } from "../../types.js";

export interface CoreBlockItemProps {
  block: CoreBlock;
  onSave: (value: string) => Promise<void>;
  onForget: () => Promise<void>;
}

/** The block. */
export function CoreBlockItem({ block, onSave, onForget }: CoreBlockItemProps) {
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(block.value);
  const [confirming, setConfirming] = useState(false);
  const [save, saving] = useAction(async () => {
    await onSave(draft);
    setEditing(false);
  });
  const [forget, forgetting] = useAction(onForget);
  return (
    <li class="core-block" data-testid="core-block" data-label={block.label}>
      <div class="memory-meta">
        <strong class="core-label">{block.label}</strong>
        <span class="badge">{block.agentId ? `@${block.agentId}` : "every agent"}</span>
        <span class="muted">
          {block.value.length}/{block.limit} characters · {formatTime(block.updatedAt)}
        </span>
        {!editing && !confirming && (
          <span class="memory-actions">
            <button
              type="button"
              class="btn btn-small"
              onClick={() => {
                setDraft(block.value);
                setEditing(true);
              }}
              data-testid="core-edit"
            >
              Edit
            </button>
            <button
              type="button"
              class="btn btn-small btn-danger"
              onClick={() => setConfirming(true)}
              data-testid="core-forget"
            >
              Forget
            </button>
          </span>
        )}
        {confirming && (
          <span class="memory-actions confirm-inline">
            Delete the whole block?
            <button
              type="button"
              class="btn btn-small btn-danger"
              disabled={forgetting}
              onClick={() => void forget()}
              data-testid="core-forget-yes"
            >
              Delete
            </button>
            <button type="button" class="btn btn-small" onClick={() => setConfirming(false)}>
              Keep
            </button>
          </span>
        )}
      </div>
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
            rows={Math.min(12, Math.max(3, draft.split("\n").length + 1))}
            value={draft}
            maxLength={block.limit}
            aria-label={`Core block ${block.label}`}
            onInput={(e) => setDraft(e.currentTarget.value)}
            data-testid="core-edit-input"
          />
          <div class="form-actions">
            <button type="button" class="btn btn-small" onClick={() => setEditing(false)}>
              Cancel
            </button>
            <button
              type="submit"
              class="btn btn-primary btn-small"
              disabled={saving}
              data-testid="core-edit-save"
            >
              Save
            </button>
          </div>
        </form>
      ) : (
        <p class="core-value" data-testid="core-value">
          {block.value || <span class="muted">(empty)</span>}
        </p>
      )}
    </li>
  );
}
