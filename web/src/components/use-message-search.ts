/**
 * Running message searches as someone types: debounced, immediate on request (Enter), and only the
 * newest request's answer is ever shown (a slow earlier answer arriving late is dropped).
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { errorText } from "../api.js";
import type { ChannelMessage } from "../types.js";

/** Pause after the last keystroke before searching. */
export const SEARCH_DEBOUNCE_MS = 300;
/** The server's limit on a query (team-schemas.ts searchQuerySchema). */
export const MAX_QUERY_CHARS = 500;

export type SearchPhase = "idle" | "loading" | "done" | "error";

export interface SearchView {
  phase: SearchPhase;
  /** The query (trimmed) and scope the shown results or error belong to. */
  query: string;
  channelId: string | undefined;
  results: ChannelMessage[];
  error: string;
}

export type SearchFn = (query: string, channelId: string | undefined) => Promise<ChannelMessage[]>;

const IDLE: SearchView = { phase: "idle", query: "", channelId: undefined, results: [], error: "" };

/** Searches for `query` within `channelId` (undefined: every channel); returns the view and `now()`. */
export function useMessageSearch(
  search: SearchFn,
  query: string,
  channelId: string | undefined,
): { view: SearchView; now: () => void } {
  const [view, setView] = useState<SearchView>(IDLE);
  const latest = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const trimmed = query.trim();

  const run = useCallback(() => {
    clearTimeout(timer.current);
    const seq = ++latest.current;
    if (trimmed === "") {
      setView(IDLE);
      return;
    }
    setView((prev) => ({ ...prev, phase: "loading" }));
    search(trimmed, channelId).then(
      (results) => {
        if (seq === latest.current) setView({ phase: "done", query: trimmed, channelId, results, error: "" });
      },
      (err: unknown) => {
        if (seq !== latest.current) return;
        setView({ phase: "error", query: trimmed, channelId, results: [], error: errorText(err) });
      },
    );
  }, [search, trimmed, channelId]);

  // Typing waits for a pause; clearing the box or switching the scope answers at once.
  const typed = useRef(trimmed);
  useEffect(() => {
    const typing = typed.current !== trimmed && trimmed !== "";
    typed.current = trimmed;
    // An answer still on its way is for the old query or scope: drop it rather than flash it.
    latest.current++;
    clearTimeout(timer.current);
    timer.current = setTimeout(run, typing ? SEARCH_DEBOUNCE_MS : 0);
    return () => clearTimeout(timer.current);
  }, [run, trimmed]);

  // Unmounting makes every answer still on its way stale.
  useEffect(
    () => () => {
      latest.current++;
    },
    [],
  );

  return { view, now: run };
}
