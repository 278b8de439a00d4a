/**
 * The files waiting in the composer: each is checked (kind by its bytes, size, files per message,
 * with the server's own words) and uploaded at once, with its progress, its preview, and the
 * refusal beside it when the check or the server says no.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import {
  type AttachmentKind,
  type AttachmentLimits,
  DEFAULT_ATTACHMENT_LIMITS,
  emptyFile,
  oversizeFile,
  problemLine,
  sniffFile,
  tooManyFiles,
  unsupportedFile,
} from "../../../src/attachments/file-rules.js";
import { errorText } from "../api.js";
import { type Upload, uploadAttachment } from "../attachment-upload.js";
import { useServices } from "../hooks.js";
import type { AttachmentView } from "../types.js";

/** One file in the tray. */
export interface PendingFile {
  key: string;
  name: string;
  size: number;
  /** Known once its first bytes were read; absent for a file Dimsum does not take. */
  kind?: AttachmentKind;
  /** An image's data URL (the page's CSP allows data: images, not blob: ones). */
  preview?: string;
  status: "checking" | "uploading" | "ready" | "error";
  /** Fraction of its bytes sent. */
  progress: number;
  error?: string;
  /** What the server stored (its id goes with the message). */
  meta?: AttachmentView;
}

export interface Attachments {
  files: PendingFile[];
  add(files: readonly File[]): void;
  remove(key: string): void;
  /** Empties the tray (after sending); uploads still running are cancelled. */
  clear(): void;
  /** Ids to send: every file uploaded. */
  ids: string[];
  /**
   * Without a chat yet (the home page), files are checked and held: this uploads them to the chat
   * just made and gives the ids to send, in order; it throws when one is refused.
   */
  uploadTo(channelId: string): Promise<string[]>;
  /** Some file is still being checked or uploaded. */
  busy: boolean;
  /** Some file was refused (it must be removed before sending). */
  failed: boolean;
}

// The limits are the server's; fetched once per page, the defaults until they arrive.
let limitsRequest: Promise<AttachmentLimits> | undefined;

const HEAD_BYTES = 64 * 1024;

function readDataUrl(file: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error("the file could not be read"));
    reader.readAsDataURL(file);
  });
}

let counter = 0;

/** The tray of one chat's composer (none yet: files are held until `uploadTo`); it empties when the chat changes. */
export function useAttachments(channelId: string | undefined): Attachments {
  const { api } = useServices();
  const [files, setFiles] = useState<PendingFile[]>([]);
  const limits = useRef<AttachmentLimits>(DEFAULT_ATTACHMENT_LIMITS);
  const uploads = useRef(new Map<string, Upload>());
  // Files checked and held while there is no chat to upload them to.
  const held = useRef(new Map<string, File>());
  // The tray as last set, for counting while several adds run before a render.
  const current = useRef<PendingFile[]>([]);

  const update = (key: string, patch: Partial<PendingFile>) => {
    current.current = current.current.map((f) => (f.key === key ? { ...f, ...patch } : f));
    setFiles(current.current);
  };

  useEffect(() => {
    limitsRequest ??= api.attachmentLimits().catch(() => {
      limitsRequest = undefined;
      return DEFAULT_ATTACHMENT_LIMITS;
    });
    let live = true;
    void limitsRequest.then((l) => {
      if (live) limits.current = l;
    });
    return () => {
      live = false;
    };
  }, [api]);

  const cancelAll = () => {
    for (const upload of uploads.current.values()) upload.abort();
    uploads.current.clear();
    held.current.clear();
    current.current = [];
    setFiles([]);
  };

  // A new chat starts with an empty tray (files belong to the chat they were uploaded to).
  useEffect(() => cancelAll, [channelId]);

  const start = async (key: string, file: File) => {
    if (file.size === 0) return update(key, { status: "error", error: problemLine(emptyFile(file.name)) });
    const head = new Uint8Array(await file.slice(0, HEAD_BYTES).arrayBuffer());
    const sniffed = sniffFile(head, file.name);
    if (!sniffed) return update(key, { status: "error", error: problemLine(unsupportedFile(file.name)) });
    const over = oversizeFile(file.name, sniffed.kind, file.size, limits.current);
    if (over) return update(key, { kind: sniffed.kind, status: "error", error: problemLine(over) });
    const preview = sniffed.kind === "image" ? await readDataUrl(file).catch(() => undefined) : undefined;
    if (!current.current.some((f) => f.key === key)) return; // removed meanwhile
    if (channelId === undefined) {
      held.current.set(key, file);
      return update(key, { kind: sniffed.kind, status: "ready", ...(preview ? { preview } : {}) });
    }
    update(key, { kind: sniffed.kind, status: "uploading", ...(preview ? { preview } : {}) });
    await send(key, file, channelId);
  };

  /** Uploads one file; false when it was refused (its refusal is shown beside it). */
  const send = async (key: string, file: File, to: string): Promise<boolean> => {
    const upload = uploadAttachment(api, to, file, file.name, (progress) => update(key, { progress }));
    uploads.current.set(key, upload);
    try {
      const meta = await upload.done;
      update(key, { status: "ready", progress: 1, meta, kind: meta.kind });
      return true;
    } catch (err) {
      if (uploads.current.get(key) === upload) update(key, { status: "error", error: errorText(err) });
      return false;
    } finally {
      if (uploads.current.get(key) === upload) uploads.current.delete(key);
    }
  };

  const uploadTo = async (to: string): Promise<string[]> => {
    for (const [key, file] of [...held.current]) {
      update(key, { status: "uploading", progress: 0 });
      if (!(await send(key, file, to)))
        throw new Error(`${file.name} could not be attached; see the file's note.`);
      held.current.delete(key);
    }
    return current.current.flatMap((f) => (f.meta ? [f.meta.id] : []));
  };

  const add = (list: readonly File[]) => {
    for (const file of list) {
      const key = `f${++counter}`;
      const counted = current.current.filter((f) => f.status !== "error").length + 1;
      const tooMany = tooManyFiles(counted, limits.current);
      const entry: PendingFile = tooMany
        ? { key, name: file.name, size: file.size, status: "error", progress: 0, error: problemLine(tooMany) }
        : { key, name: file.name, size: file.size, status: "checking", progress: 0 };
      current.current = [...current.current, entry];
      setFiles(current.current);
      if (!tooMany)
        void start(key, file).catch((err: unknown) =>
          update(key, { status: "error", error: errorText(err) }),
        );
    }
  };

  const remove = (key: string) => {
    uploads.current.get(key)?.abort();
    uploads.current.delete(key);
    held.current.delete(key);
    current.current = current.current.filter((f) => f.key !== key);
    setFiles(current.current);
  };

  return {
    files,
    add,
    remove,
    clear: cancelAll,
    ids: files.flatMap((f) => (f.status === "ready" && f.meta ? [f.meta.id] : [])),
    uploadTo,
    busy: files.some((f) => f.status === "checking" || f.status === "uploading"),
    failed: files.some((f) => f.status === "error"),
  };
}
