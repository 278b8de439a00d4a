/**
 * The pieces both composers (a chat's and the home page's) attach files with: the paperclip button
 * with its hidden file picker, the note under the tray, and what a paste attaches.
 */
import { useRef } from "preact/hooks";
import { t } from "../i18n/index.js";
import { AttachmentTray } from "./attachment-tray.js";
import type { Attachments } from "./use-attachments.js";

function PaperclipIcon() {
  return (
    <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" focusable="false">
      <path
        d="M21.4 11.1l-8.5 8.5a5.5 5.5 0 01-7.8-7.8l8.5-8.5a3.7 3.7 0 015.2 5.2l-8.5 8.5a1.8 1.8 0 01-2.6-2.6l7.8-7.8"
        fill="none"
        stroke="currentColor"
        stroke-width="1.8"
        stroke-linecap="round"
        stroke-linejoin="round"
      />
    </svg>
  );
}

/** The paperclip: opens the file picker; the files picked go to `onFiles`. */
export function AttachButton({
  disabled,
  onFiles,
  testId = "composer",
}: {
  disabled?: boolean;
  onFiles: (files: File[]) => void;
  /** The test ids' prefix (`<prefix>-attach`, `<prefix>-file-input`). */
  testId?: string;
}) {
  const picker = useRef<HTMLInputElement>(null);
  return (
    <>
      <button
        type="button"
        class="icon-btn composer-attach"
        aria-label={t("attach.label")}
        title={t("attach.title")}
        disabled={disabled}
        onClick={() => picker.current?.click()}
        data-testid={`${testId}-attach`}
      >
        <PaperclipIcon />
      </button>
      <input
        ref={picker}
        type="file"
        multiple
        hidden
        data-testid={`${testId}-file-input`}
        onChange={(e) => {
          const el = e.currentTarget;
          onFiles([...(el.files ?? [])]);
          el.value = "";
        }}
      />
    </>
  );
}

/** Under the tray: what still stops the files from going (the server needs some text with them). */
function AttachNote({ busy, failed, hasText }: { busy: boolean; failed: boolean; hasText: boolean }) {
  const note = failed
    ? t("attach.removeFailed")
    : busy
      ? t("attach.uploading")
      : hasText
        ? undefined
        : t("attach.addText");
  if (!note) return null;
  return (
    <p class="composer-hint muted" data-testid="attach-note">
      {note}
    </p>
  );
}

/**
 * The files a paste attaches: a copied image or file does; copied text (even with a picture of it, as
 * spreadsheets copy) pastes as text. Some systems put a copied file's name in the text: that is no text.
 */
export function pastedFiles(data: DataTransfer | null): File[] {
  const files = [...(data?.files ?? [])];
  const pasted = data?.getData("text/plain").trim() ?? "";
  if (files.length === 0) return [];
  if (pasted !== "" && !files.some((f) => f.name === pasted)) return [];
  return files;
}

/** Above the input: the drop target while files are dragged over the page, the tray and its note. */
export function AttachArea({
  dragging,
  attachments,
  hasText,
}: {
  dragging: boolean;
  attachments: Attachments;
  hasText: boolean;
}) {
  return (
    <>
      {dragging && (
        <div class="composer-drop" data-testid="composer-drop">
          Drop files to attach them (images, PDFs, text)
        </div>
      )}
      <AttachmentTray files={attachments.files} onRemove={attachments.remove} />
      {attachments.files.length > 0 && (
        <AttachNote busy={attachments.busy} failed={attachments.failed} hasText={hasText} />
      )}
    </>
  );
}
