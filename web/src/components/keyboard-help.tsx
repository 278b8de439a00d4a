/** The keyboard shortcuts, listed in a dialog that `?` opens from anywhere but a text field. */
import { useEffect, useState } from "preact/hooks";
import { Modal } from "./modal.js";

const MOD = typeof navigator !== "undefined" && /Mac|iPhone|iPad/.test(navigator.userAgent) ? "⌘" : "Ctrl";

/** Every shortcut, as keys and what they do. */
export const SHORTCUTS: ReadonlyArray<{ keys: string[]; what: string }> = [
  { keys: [MOD, "K"], what: "Search messages" },
  { keys: ["Enter"], what: "Send the message" },
  { keys: ["Shift", "Enter"], what: "New line in the message" },
  { keys: ["Esc"], what: "Stop the answer streaming in this chat" },
  { keys: ["↑"], what: "In an empty composer: edit your last message" },
  { keys: ["@"], what: "Mention an agent (in a group)" },
  { keys: ["/"], what: "At the start of a message: use a prompt of an MCP server" },
  { keys: ["?"], what: "Show these shortcuts" },
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
    <Modal title="Keyboard shortcuts" onClose={onClose} testId="keyboard-help">
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
            <dd>{s.what}</dd>
          </div>
        ))}
      </dl>
    </Modal>
  );
}
