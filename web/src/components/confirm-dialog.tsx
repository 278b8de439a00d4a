/**
 * In-app confirmation instead of the browser's `confirm()`: `askConfirm({...})` resolves true or
 * false once the person answers; `<ConfirmDialogHost />` (mounted once in the app shell) shows the
 * question. Escape, the backdrop, × and Cancel all answer no.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { t } from "../i18n/index.js";
import { Modal } from "./modal.js";

export interface ConfirmOptions {
  /** The dialog's title, e.g. "Delete this message?". */
  title: string;
  /** What will happen, in a sentence or two. */
  message?: string;
  /** The confirming button's label (default "Delete"). */
  confirmLabel?: string;
  /** Red confirming button (default true: most confirmations are about removing something). */
  danger?: boolean;
}

interface Pending extends ConfirmOptions {
  resolve: (answer: boolean) => void;
}

let show: ((pending: Pending) => void) | undefined;

/** Asks the person to confirm; false without asking when no host is mounted. */
export function askConfirm(options: ConfirmOptions): Promise<boolean> {
  return new Promise((resolve) => {
    if (!show) resolve(false);
    else show({ ...options, resolve });
  });
}

/** Renders the open question, if any. Mount once. */
export function ConfirmDialogHost() {
  const [pending, setPending] = useState<Pending | undefined>(undefined);
  const cancelButton = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    show = (next) =>
      setPending((current) => {
        current?.resolve(false);
        return next;
      });
    return () => {
      show = undefined;
    };
  }, []);
  useEffect(() => {
    if (pending) cancelButton.current?.focus();
  }, [pending]);
  if (!pending) return null;
  const answer = (yes: boolean) => {
    pending.resolve(yes);
    setPending(undefined);
  };
  return (
    <Modal title={pending.title} onClose={() => answer(false)} testId="confirm-dialog">
      {pending.message && (
        <p class="confirm-message" data-testid="confirm-message">
          {pending.message}
        </p>
      )}
      <div class="confirm-actions">
        <button
          type="button"
          class="btn"
          ref={cancelButton}
          onClick={() => answer(false)}
          data-testid="confirm-cancel"
        >
          {t("common.cancel")}
        </button>
        <button
          type="button"
          class={`btn ${pending.danger === false ? "btn-primary" : "btn-danger"}`}
          onClick={() => answer(true)}
          data-testid="confirm-ok"
        >
          {pending.confirmLabel ?? t("common.delete")}
        </button>
      </div>
    </Modal>
  );
}
