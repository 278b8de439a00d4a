/** The pieces every run shows: its lifecycle badge, a stop button, the reasoning block and tool cards. */

import { useAction, useServices } from "../hooks.js";
import { isTerminal, type RunView } from "../state/chat.js";
import type { RunStatus } from "../types.js";
import { WithSettingsLinks } from "./settings-links.js";
import { ToolCard } from "./tool-card.js";

const BADGE_LABEL: Record<RunStatus, string> = {
  queued: "queued",
  running: "running",
  done: "done",
  error: "error",
  cancelled: "stopped",
};

/** The run's lifecycle badge. */
export function RunBadge({ status }: { status: RunStatus | undefined }) {
  const shown = status ?? "running";
  return (
    <span class={`badge badge-run badge-${shown}`} data-testid="run-status" data-status={shown}>
      {shown === "running" && <span class="spinner" aria-hidden="true" />}
      {BADGE_LABEL[shown]}
    </span>
  );
}

/** Cancels this one run; other runs in the channel keep going. */
export function StopButton({ runId }: { runId: string }) {
  const { api, store } = useServices();
  const [stop, busy] = useAction(async () => {
    const run = await api.cancelRun(runId);
    store.dispatch({ type: "run", run });
  });
  return (
    <button
      type="button"
      class="btn btn-small btn-danger"
      onClick={() => void stop()}
      disabled={busy}
      data-testid="run-stop"
      data-run-id={runId}
    >
      ■ Stop
    </button>
  );
}

/** Reasoning (collapsed) and tool cards of a run, plus its error if it failed. */
export function RunDetails({ view }: { view: RunView }) {
  const status = view.run?.status;
  return (
    <>
      {view.reasoning && (
        <details class="reasoning" data-testid="reasoning">
          <summary>
            {isTerminal(status) ? "Reasoning" : "Thinking…"}{" "}
            <span class="muted">({view.reasoning.length} chars)</span>
          </summary>
          <div class="reasoning-text" data-testid="reasoning-text">
            {view.reasoning}
          </div>
        </details>
      )}
      {view.tools.length > 0 && (
        <div class="tool-list" data-testid="tool-list">
          {view.tools.map((call) => (
            <ToolCard key={call.callId} call={call} />
          ))}
        </div>
      )}
      {status === "error" && view.run?.error && (
        <p class="run-error" data-testid="run-error">
          <WithSettingsLinks text={view.run.error} />
        </p>
      )}
    </>
  );
}

/** Badge and (while active) stop button, for a message or bubble header. */
export function RunControls({ view }: { view: RunView }) {
  const status = view.run?.status;
  return (
    <span class="run-controls">
      <RunBadge status={status} />
      {!isTerminal(status) && <StopButton runId={view.id} />}
    </span>
  );
}
