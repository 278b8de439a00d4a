/** Opening a channel: load its latest messages, then follow it live from the last one loaded. */
import { useEffect, useState } from "preact/hooks";
import { PAGE_SIZE } from "./components/message-list.js";
import { useReportError, useServices } from "./hooks.js";

const RECENT_RUNS_TO_LOOK_UP = 3;

/** Opens `channelId` in the store and the live connection for as long as the caller is mounted. */
export function useOpenChannel(channelId: string): void {
  const { api, store, live } = useServices();
  const report = useReportError();
  useEffect(() => {
    store.dispatch({ type: "open_channel", channelId });
    const alreadyLoaded = store.getState().chat?.loaded ?? false;
    let cancelled = false;
    api
      .listMessages(channelId, { limit: PAGE_SIZE })
      .then((messages) => {
        if (cancelled) return;
        store.dispatch({
          type: "history",
          channelId,
          messages,
          ...(alreadyLoaded ? {} : { hasOlder: messages.length >= PAGE_SIZE }),
        });
        // Subscribing after the history arrived makes `since` the last message we hold.
        live.follow(channelId);
        // Each answer's model, tokens and cost (shown under it) and the chat's totals.
        api.channelRuns(channelId).then(
          (runs) => {
            if (!cancelled) store.dispatch({ type: "answer_runs", channelId, runs });
          },
          () => undefined,
        );
        // Recent runs tell us about a flow that is still waiting (e.g. for an approval).
        const runIds = messages
          .map((m) => m.runId)
          .filter((id): id is string => id !== undefined)
          .slice(-RECENT_RUNS_TO_LOOK_UP);
        // So do answers waiting for approval: their run says whether it still waits.
        const waiting = messages.filter((m) =>
          m.parts.some((p) => p.type === "tool" && p.approval?.state === "pending"),
        );
        for (const m of waiting) if (m.runId !== undefined && !runIds.includes(m.runId)) runIds.push(m.runId);
        for (const runId of runIds) live.discoverRun(runId);
        // Requests for input put to this person before the page was open.
        return api.listElicitations(channelId).then((open) => {
          if (cancelled) return;
          for (const request of open) {
            live.discoverRun(request.shownIn ?? request.runId);
            const { channelId: channel, runId, userId } = request;
            store.dispatch({
              type: "frame",
              frame: { type: "elicitation", channelId: channel, runId, userId, request },
            });
          }
        });
      })
      .catch((err: unknown) => {
        if (!cancelled) report(err);
      });
    return () => {
      cancelled = true;
    };
  }, [channelId, api, store, live]);
}

/** Whether the page is visible (a hidden tab does not mark messages read). */
export function usePageVisible(): boolean {
  const [visible, setVisible] = useState(() => document.visibilityState === "visible");
  useEffect(() => {
    const update = () => setVisible(document.visibilityState === "visible");
    document.addEventListener("visibilitychange", update);
    return () => document.removeEventListener("visibilitychange", update);
  }, []);
  return visible;
}
