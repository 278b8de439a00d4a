/**
 * Transient error/info messages; each can be dismissed and goes away on its own. In the app shell they
 * take a row of the layout under the top bar (layout.css) instead of floating over it, so they never
 * cover navigation such as a page's settings link.
 */
import { useEffect } from "preact/hooks";
import { useSelector, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import type { Services } from "../services.js";
import type { Notice } from "../state/app.js";

const LIFETIME_MS = 8000;

function NoticeItem({ notice }: { notice: Notice }) {
  const { store } = useServices();
  useEffect(() => {
    const timer = setTimeout(() => store.dispatch({ type: "dismiss", id: notice.id }), LIFETIME_MS);
    return () => clearTimeout(timer);
  }, [notice.id, store]);
  return (
    <div
      class={`notice notice-${notice.kind}`}
      role={notice.kind === "error" ? "alert" : "status"}
      data-testid="notice"
    >
      <span class="notice-text">{notice.text}</span>
      <button
        type="button"
        class="icon-btn"
        aria-label={t("common.dismiss")}
        onClick={() => store.dispatch({ type: "dismiss", id: notice.id })}
        data-testid="notice-dismiss"
      >
        ×
      </button>
    </div>
  );
}

/** Dismisses every error notice: after a success they describe a problem that is gone. */
export function clearErrorNotices(store: Services["store"]): void {
  for (const notice of store.getState().notices)
    if (notice.kind === "error") store.dispatch({ type: "dismiss", id: notice.id });
}

/**
 * Says a success: error notices about the problem go, and so does an earlier success notice, so a
 * series of saves shows one line instead of a growing stack.
 */
export function notifySuccess(store: Services["store"], text: string): void {
  for (const notice of store.getState().notices) store.dispatch({ type: "dismiss", id: notice.id });
  store.dispatch({ type: "notice", kind: "info", text });
}

/** The notice stack. */
export function Notices() {
  const notices = useSelector((s) => s.notices);
  if (notices.length === 0) return null;
  return (
    <section class="notices" aria-label={t("notices.label")} data-testid="notices">
      {notices.map((notice) => (
        <NoticeItem key={notice.id} notice={notice} />
      ))}
    </section>
  );
}
