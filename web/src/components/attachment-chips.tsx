/**
 * Files attached to a message, as the history shows them: images as lazy-loaded thumbnails and
 * other files as chips with name, kind and size; each opens the file in a new tab.
 */
import type { AttachmentKind } from "../../../src/attachments/file-rules.js";
import { attachmentUrl } from "../attachment-upload.js";
import { formatBytes } from "../format.js";
import type { MessagePart } from "../types.js";

type AttachmentPart = Extract<MessagePart, { type: "attachment" }>;

const KIND_LABEL: Record<AttachmentKind, string> = { image: "Image", pdf: "PDF", text: "Text" };

/** "PDF · 12 KB". */
export function kindAndSize(kind: AttachmentKind | undefined, size: number): string {
  return `${kind ? KIND_LABEL[kind] : "File"} · ${formatBytes(size)}`;
}

/** A document glyph with the kind's short label. */
export function FileIcon({ kind }: { kind: AttachmentKind | undefined }) {
  return (
    <span class={`file-icon file-icon-${kind ?? "other"}`} aria-hidden="true">
      {kind === "pdf" ? "PDF" : kind === "image" ? "IMG" : kind === "text" ? "TXT" : "?"}
    </span>
  );
}

/** The attachment parts of a message; nothing when it has none. */
export function AttachmentChips({ channelId, parts }: { channelId: string; parts: readonly MessagePart[] }) {
  const files = parts.filter((p): p is AttachmentPart => p.type === "attachment");
  if (files.length === 0) return null;
  return (
    <ul class="msg-attachments" data-testid="message-attachments">
      {files.map((file) => {
        const href = attachmentUrl(channelId, file.id);
        const label = `${file.name}, ${kindAndSize(file.kind, file.size)} (opens in a new tab)`;
        return (
          <li key={file.id}>
            {file.kind === "image" ? (
              <a
                class="msg-thumb"
                href={href}
                target="_blank"
                rel="noopener noreferrer"
                title={file.name}
                aria-label={label}
                data-testid="message-image"
                data-name={file.name}
              >
                <img src={href} alt={file.name} loading="lazy" decoding="async" />
              </a>
            ) : (
              <a
                class="file-chip"
                href={href}
                target="_blank"
                rel="noopener noreferrer"
                title={file.name}
                aria-label={label}
                data-testid="message-file"
                data-name={file.name}
              >
                <FileIcon kind={file.kind} />
                <span class="file-chip-text">
                  <span class="file-chip-name">{file.name}</span>
                  <span class="file-chip-meta muted">{kindAndSize(file.kind, file.size)}</span>
                </span>
              </a>
            )}
          </li>
        );
      })}
    </ul>
  );
}
