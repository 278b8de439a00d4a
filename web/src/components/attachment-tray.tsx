/**
 * The files waiting in the composer: a thumbnail for an image, a chip (name, kind, size) for any
 * other file, each with its upload progress, the refusal beside it, and a remove button.
 */

import { t } from "../i18n/index.js";
import { FileIcon, kindAndSize } from "./attachment-chips.js";
import type { PendingFile } from "./use-attachments.js";

function RemoveButton({ file, onRemove }: { file: PendingFile; onRemove: (key: string) => void }) {
  return (
    <button
      type="button"
      class="tray-remove"
      aria-label={t("attach.removeNamed", { name: file.name })}
      title={t("attach.remove")}
      onClick={() => onRemove(file.key)}
      data-testid="attachment-remove"
    >
      ×
    </button>
  );
}

function Progress({ file }: { file: PendingFile }) {
  if (file.status !== "uploading" && file.status !== "checking") return null;
  const percent = Math.round(file.progress * 100);
  return (
    <span
      class="tray-progress"
      role="progressbar"
      aria-label={t("attach.uploadingNamed", { name: file.name })}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={percent}
    >
      <span style={{ width: `${Math.max(percent, 4)}%` }} />
    </span>
  );
}

/** The tray; nothing when no file waits. */
export function AttachmentTray({
  files,
  onRemove,
}: {
  files: readonly PendingFile[];
  onRemove: (key: string) => void;
}) {
  if (files.length === 0) return null;
  return (
    <ul class="attachment-tray" aria-label={t("attach.tray")} data-testid="attachment-tray">
      {files.map((file) => {
        const thumb = file.preview !== undefined && file.status !== "error";
        return (
          <li
            key={file.key}
            class={`tray-item${thumb ? " tray-thumb" : " tray-chip"}${file.status === "error" ? " is-error" : ""}`}
            data-testid="attachment-item"
            data-name={file.name}
            data-status={file.status}
            data-kind={file.kind ?? ""}
            aria-busy={file.status === "uploading" || file.status === "checking"}
          >
            {thumb ? (
              <img src={file.preview} alt={file.name} title={file.name} />
            ) : (
              <>
                <FileIcon kind={file.kind} />
                <span class="file-chip-text">
                  <span class="file-chip-name" title={file.name}>
                    {file.name}
                  </span>
                  <span class="file-chip-meta muted">{kindAndSize(file.kind, file.size)}</span>
                  {file.error && (
                    <span class="tray-error" role="alert" data-testid="attachment-error">
                      {file.error}
                    </span>
                  )}
                </span>
              </>
            )}
            <Progress file={file} />
            <RemoveButton file={file} onRemove={onRemove} />
          </li>
        );
      })}
    </ul>
  );
}
