/**
 * The message search panel: a query box searching every channel the user can see (or only the open
 * one), and the hits, best first. Opening a hit goes to its channel and scrolls to the message.
 * Escape or the backdrop closes it; arrow keys move between the box and the hits.
 */

import { useCallback, useLayoutEffect, useRef, useState } from "preact/hooks";
import { errorText } from "../api.js";
import { useSelector, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import { parseRoute } from "../state/route.js";
import type { ChannelMessage, SessionUser } from "../types.js";
import { SearchResultItem } from "./search-result-item.js";
import { revealMessage } from "./search-reveal.js";
import { MAX_QUERY_CHARS, type SearchView, useMessageSearch } from "./use-message-search.js";

/** What the panel remembers between openings. */
export interface SearchMemory {
  query: string;
  onlyThisChannel: boolean;
}

export interface MessageSearchProps {
  me: SessionUser;
  /** The channel on screen, if any: the one "only this channel" restricts to. */
  channelId: string | undefined;
  memory: SearchMemory;
  onClose: (memory: SearchMemory) => void;
}

const REVEAL_NOTICE = {
  too_old: "search.tooOld",
  missing: "search.missing",
} as const;

function statusText(view: SearchView, scopeName: string | undefined): string {
  if (view.phase === "idle")
    return scopeName ? t("search.typeIn", { scope: scopeName }) : t("search.typeAll");
  if (view.phase === "loading") return t("search.searching");
  if (view.phase === "error") return t("search.failed");
  const n = view.results.length;
  return n === 0 ? "" : t("search.found", { count: n });
}

/** The search dialog. */
export function MessageSearch({ me, channelId, memory, onClose }: MessageSearchProps) {
  const services = useServices();
  const channels = useSelector((s) => s.channels.list);
  const agents = useSelector((s) => s.agents);
  const [query, setQuery] = useState(memory.query);
  const [onlyThis, setOnlyThis] = useState(memory.onlyThisChannel);
  const input = useRef<HTMLInputElement>(null);
  const list = useRef<HTMLUListElement>(null);
  const { api, store, navigate } = services;
  const scoped = onlyThis && channelId !== undefined ? channelId : undefined;
  const search = useCallback((q: string, c: string | undefined) => api.search(q, c), [api]);
  const { view, now } = useMessageSearch(search, query, scoped);
  const openChannel = channels.find((c) => c.id === channelId);
  const scopeName = scoped && openChannel ? openChannel.name : undefined;

  const close = () => onClose({ query, onlyThisChannel: onlyThis });
  const closeRef = useRef(close);
  closeRef.current = close;

  // A layout effect: the input has the focus from the first paint, so keys typed at once land in it.
  useLayoutEffect(() => {
    const opener = document.activeElement;
    input.current?.focus();
    input.current?.select();
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== "Escape") return;
      event.preventDefault();
      closeRef.current();
    };
    window.addEventListener("keydown", onKey);
    return () => {
      window.removeEventListener("keydown", onKey);
      // Hand focus back to whatever opened the panel (the search button), as dialogs do.
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
    };
  }, []);

  const openHit = (message: ChannelMessage) => {
    close();
    navigate({ name: "channel", channelId: message.channelId });
    const wanted = () => {
      const route = parseRoute(location.pathname);
      return route.name === "channel" && route.channelId === message.channelId;
    };
    revealMessage(services, message.channelId, message.id, wanted).then(
      (outcome) => {
        if (outcome === "too_old" || outcome === "missing") {
          store.dispatch({ type: "notice", kind: "info", text: t(REVEAL_NOTICE[outcome]) });
        }
      },
      (err: unknown) => store.dispatch({ type: "notice", kind: "error", text: errorText(err) }),
    );
  };

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
    const links = [...(list.current?.querySelectorAll<HTMLElement>("a.search-result") ?? [])];
    if (links.length === 0) return;
    event.preventDefault();
    const at = links.indexOf(document.activeElement as HTMLElement);
    const next = event.key === "ArrowDown" ? at + 1 : at - 1;
    if (next < 0) input.current?.focus();
    else links[Math.min(next, links.length - 1)]?.focus();
  };

  // While a new search runs, the previous hits stay (dimmed) instead of flickering away.
  const listed = view.phase === "done" || view.phase === "loading" ? view.results : [];
  const status = statusText(view, scopeName);
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: a backdrop click is a mouse shortcut; Escape and the × button close it too.
    // biome-ignore lint/a11y/useKeyWithClickEvents: Escape is handled by the panel's keydown below.
    <div
      class="search-backdrop"
      onClick={(e) => {
        if (e.target === e.currentTarget) close();
      }}
    >
      <div
        class="search-panel"
        role="dialog"
        aria-modal="true"
        aria-labelledby="message-search-title"
        onKeyDown={onKeyDown}
        data-testid="message-search"
      >
        <div class="search-head">
          <h2 id="message-search-title">{t("app.searchMessages")}</h2>
          <button
            type="button"
            class="icon-btn"
            aria-label={t("search.close")}
            onClick={close}
            data-testid="search-close"
          >
            ×
          </button>
        </div>
        <form
          class="search-form"
          onSubmit={(e) => {
            e.preventDefault();
            now();
          }}
        >
          <input
            ref={input}
            type="search"
            value={query}
            maxLength={MAX_QUERY_CHARS}
            placeholder={
              scopeName ? t("search.placeholderIn", { scope: scopeName }) : t("search.placeholderAll")
            }
            aria-label={t("app.searchMessages")}
            aria-describedby="message-search-status"
            autoComplete="off"
            enterKeyHint="search"
            onInput={(e) => setQuery(e.currentTarget.value)}
            data-testid="search-input"
          />
          <button type="submit" class="btn btn-primary" data-testid="search-submit">
            {t("search.submit")}
          </button>
        </form>
        {channelId !== undefined && (
          <label class="check search-scope">
            <input
              type="checkbox"
              checked={onlyThis}
              onChange={(e) => setOnlyThis(e.currentTarget.checked)}
              data-testid="search-this-channel"
            />
            {t("search.onlyIn", { scope: openChannel ? openChannel.name : t("search.thisChannel") })}
          </label>
        )}
        <p
          id="message-search-status"
          class="muted search-status"
          role="status"
          data-testid="search-status"
          data-phase={view.phase}
          data-query={view.query}
          data-scope={view.channelId ?? "all"}
        >
          {status}
        </p>
        {view.phase === "error" && (
          <p class="search-error" role="alert" data-testid="search-error">
            {t("search.error", { error: view.error })}
          </p>
        )}
        {view.phase === "done" && view.results.length === 0 && (
          <p class="search-empty muted" data-testid="search-empty">
            {scopeName
              ? t("search.noneIn", { query: view.query, scope: scopeName })
              : t("search.none", { query: view.query })}
          </p>
        )}
        {listed.length > 0 && (
          <ul
            ref={list}
            class={`search-results${view.phase === "loading" ? " stale" : ""}`}
            aria-label={t("search.results")}
            data-testid="search-results"
          >
            {listed.map((message) => (
              <SearchResultItem
                key={message.id}
                message={message}
                query={view.query}
                channel={channels.find((c) => c.id === message.channelId)}
                agents={agents}
                me={me}
                onOpen={openHit}
              />
            ))}
          </ul>
        )}
      </div>
    </div>
  );
}
