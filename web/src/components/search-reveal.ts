/**
 * Jumping to a message found by search: once its channel is open and loaded, load earlier pages until
 * the message is held (a bounded number), then scroll it into view and mark it briefly. Works from
 * outside the message list, through the store and the rendered `data-message-id` attributes.
 */
import type { Services } from "../services.js";
import type { AppState } from "../state/app.js";
import { PAGE_SIZE } from "./message-list.js";

/** What became of a jump: shown, further back than we page, deleted, or abandoned (navigated away). */
export type RevealOutcome = "shown" | "too_old" | "missing" | "abandoned";

export interface RevealOptions {
  /** Earlier pages to load at most before giving up on an old message. */
  maxPages?: number;
  /** How long to wait for the channel to load and the message to render. */
  timeoutMs?: number;
}

/** The class that marks the message jumped to; its CSS animation fades out on its own. */
export const HIT_CLASS = "msg-search-hit";
const DEFAULT_MAX_PAGES = 10;
const DEFAULT_TIMEOUT_MS = 10_000;

/** Resolves with the first state `ready` accepts, or undefined on timeout or when `stop` says so. */
function waitForState(
  services: Services,
  ready: (state: AppState) => boolean,
  stop: () => boolean,
  deadline: number,
): Promise<AppState | undefined> {
  return new Promise((resolve) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let unsubscribe = () => {};
    const finish = (state: AppState | undefined) => {
      clearTimeout(timer);
      unsubscribe();
      resolve(state);
    };
    const check = () => {
      const state = services.store.getState();
      if (stop()) finish(undefined);
      else if (ready(state)) finish(state);
    };
    unsubscribe = services.store.subscribe(check);
    timer = setTimeout(() => finish(undefined), Math.max(0, deadline - Date.now()));
    check();
  });
}

/** Resolves with the element once it is in the document, or undefined on timeout. */
function waitForElement(selector: string, deadline: number): Promise<HTMLElement | undefined> {
  const find = () => document.querySelector<HTMLElement>(selector) ?? undefined;
  const found = find();
  if (found) return Promise.resolve(found);
  return new Promise((resolve) => {
    const observer = new MutationObserver(() => {
      const el = find();
      if (!el) return;
      observer.disconnect();
      clearTimeout(timer);
      resolve(el);
    });
    const timer = setTimeout(
      () => {
        observer.disconnect();
        resolve(undefined);
      },
      Math.max(0, deadline - Date.now()),
    );
    observer.observe(document.body, { childList: true, subtree: true });
  });
}

function showElement(el: HTMLElement): void {
  for (const old of document.querySelectorAll(`.${HIT_CLASS}`)) old.classList.remove(HIT_CLASS);
  el.scrollIntoView({ block: "center" });
  // The list re-pins itself to the bottom on every render until it hears the reader scrolled away.
  el.closest('[data-testid="message-list"]')?.dispatchEvent(new Event("scroll"));
  el.classList.add(HIT_CLASS);
  el.setAttribute("tabindex", "-1");
  el.focus({ preventScroll: true });
}

/**
 * Brings message `messageId` of `channelId` into view after navigating there; `stillWanted` turns
 * false when the reader has moved on (then nothing scrolls under them).
 */
export async function revealMessage(
  services: Services,
  channelId: string,
  messageId: number,
  stillWanted: () => boolean,
  options: RevealOptions = {},
): Promise<RevealOutcome> {
  const deadline = Date.now() + (options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const maxPages = options.maxPages ?? DEFAULT_MAX_PAGES;
  const stop = () => !stillWanted();
  for (let pages = 0; ; pages++) {
    const state = await waitForState(
      services,
      (s) => s.chat?.channelId === channelId && s.chat.loaded,
      stop,
      deadline,
    );
    const chat = state?.chat;
    if (!chat) return "abandoned";
    if (chat.messages.some((m) => m.id === messageId)) break;
    const first = chat.messages[0]?.id;
    if (!chat.hasOlder || first === undefined || first < messageId) return "missing";
    if (pages >= maxPages) return "too_old";
    const page = await services.api.listMessages(channelId, { before: first, limit: PAGE_SIZE });
    if (stop()) return "abandoned";
    services.store.dispatch({
      type: "history",
      channelId,
      messages: page,
      hasOlder: page.length >= PAGE_SIZE,
    });
  }
  const selector = `[data-testid="message-list"] [data-message-id="${messageId}"]`;
  const el = await waitForElement(selector, deadline);
  if (!el || stop()) return "abandoned";
  showElement(el);
  return "shown";
}
