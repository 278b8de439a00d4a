/** A centred dialog over a backdrop; Escape or a backdrop click closes it. */
import type { ComponentChildren } from "preact";
import { useLayoutEffect } from "preact/hooks";
import { t } from "../i18n/index.js";

export interface ModalProps {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  testId?: string;
}

/** Modal dialog. */
export function Modal({ title, onClose, children, testId }: ModalProps) {
  // A layout effect: listening from the first paint, so an Escape pressed at once is not lost.
  useLayoutEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key === "Escape") onClose();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [onClose]);
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: a backdrop click is a mouse shortcut; Escape and the × button close it too.
    // biome-ignore lint/a11y/useKeyWithClickEvents: Escape is handled on window above.
    <div
      class="modal-backdrop"
      onClick={(e) => {
        if (e.target === e.currentTarget) onClose();
      }}
    >
      <div class="modal" role="dialog" aria-modal="true" aria-label={title} data-testid={testId}>
        <div class="modal-head">
          <h2>{title}</h2>
          <button
            type="button"
            class="icon-btn"
            aria-label={t("common.close")}
            onClick={onClose}
            data-testid="modal-close"
          >
            ×
          </button>
        </div>
        {children}
      </div>
    </div>
  );
}
