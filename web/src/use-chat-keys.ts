/**
 * The open chat's keyboard shortcuts: Escape stops the answers streaming in it (as the Stop button
 * does), and ↑ in an empty composer opens your last message for editing (the composer sends
 * `EDIT_LAST_EVENT`; the message that may be edited listens for it).
 */
import { useEffect } from "preact/hooks";
import { useServices } from "./hooks.js";
import { activeRuns } from "./state/chat.js";

/** Dispatched on window by the composer when ↑ is pressed while it is empty. */
export const EDIT_LAST_EVENT = "dimsum:edit-last-message";

/** Where Escape already means something else: dialogs, the search panel, a message being edited. */
const ESCAPE_OWNERS = '[role="dialog"], .msg-edit';

/** Escape stops the streaming answers of the open chat. */
export function useStopOnEscape(channelId: string): void {
  const { api, store } = useServices();
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== "Escape" || event.defaultPrevented || event.isComposing) return;
      const target = event.target instanceof Element ? event.target : null;
      if (target?.closest(ESCAPE_OWNERS) || document.querySelector('[aria-modal="true"]')) return;
      const chat = store.getState().chat;
      if (chat?.channelId !== channelId) return;
      const streaming = activeRuns(chat).flatMap((view) =>
        view.run &&
        view.run.parentRunId === undefined &&
        (view.run.status === "running" || view.run.status === "queued")
          ? [view.run.id]
          : [],
      );
      if (streaming.length === 0) return;
      event.preventDefault();
      for (const runId of streaming) {
        api
          .cancelRun(runId)
          .then((run) => store.dispatch({ type: "run", run }))
          .catch((err: unknown) =>
            store.dispatch({
              type: "notice",
              kind: "error",
              text: err instanceof Error ? err.message : String(err),
            }),
          );
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [api, store, channelId]);
}
