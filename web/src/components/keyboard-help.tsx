/** The keyboard shortcuts, listed in a dialog that `?` opens from anywhere but a text field. */
import { useEffect, useState } from "preact/hooks";
import { type MessageKey, t } from "../i18n/index.js";
import { Modal } from "./modal.js";

const MOD = typeof navigator !== "undefined" && /Mac|iPhone|iPad/.test(navigator.userAgent) ? "⌘" : "Ctrl";

/** Every shortcut, as keys and what they do. */
export const SHORTCUTS: ReadonlyArray<{ keys: string[]; what: MessageKey }> = [
  { keys: [MOD, "K"], what: "app.searchMessages" },
  { keys: ["Enter"], what: "keys.send" },
  { keys: ["Shift", "Enter"], what: "keys.newLine" },
  { keys: ["Esc"], what: "keys.stop" },
  { keys: ["↑"], what: "keys.editLast" },
  { keys: ["@"], what: "keys.mention" },
  { keys: ["/"], what: "keys.prompt" },
  { keys: ["?"], what: "keys.help" },
];

function typing(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
}

/** Whether the shortcuts dialog is open; `?` outside text fields opens it. */
export function useKeyboardHelp(): { open: boolean; show: () => void; hide: () => void } {
  const [open, setOpen] = useState(false);
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== "?" || event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
      event.preventDefault();
      setOpen(true);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
  return { open, show: () => setOpen(true), hide: () => setOpen(false) };
}

/** The dialog. */
export function KeyboardHelp({ onClose }: { onClose: () => void }) {
  return (
    <Modal title={t("sidebar.shortcuts")} onClose={onClose} testId="keyboard-help">
      <dl class="shortcut-list">
        {SHORTCUTS.map((s) => (
          <div key={s.what} class="shortcut" data-testid="shortcut">
            <dt>
              {s.keys.map((k, i) => (
                <span key={k}>
                  {i > 0 && " + "}
                  <kbd>{k}</kbd>
                </span>
              ))}
            </dt>
            <dd>{t(s.what)}</dd>
          </div>
        ))}
      </dl>
    </Modal>
  );
}
