/**
 * Uploads one file to a chat (`POST /api/channels/:id/attachments?name=`, the raw bytes as the body)
 * with XMLHttpRequest, because fetch cannot report upload progress; abortable when the person removes
 * the file before it is sent.
 */
import { type ApiClient, ApiError } from "./api.js";
import type { AttachmentView } from "./types.js";

export interface Upload {
  done: Promise<AttachmentView>;
  abort: () => void;
}

function uploadError(xhr: XMLHttpRequest): ApiError {
  try {
    const body = JSON.parse(xhr.responseText) as { error?: { code?: string; message?: string } };
    return new ApiError(xhr.status, body.error?.code ?? "error", body.error?.message ?? `HTTP ${xhr.status}`);
  } catch {
    return new ApiError(xhr.status, "error", `the upload failed (HTTP ${xhr.status}); try again`);
  }
}

/** Starts the upload; `onProgress` gets the fraction of bytes sent. */
export function uploadAttachment(
  api: ApiClient,
  channelId: string,
  file: Blob,
  name: string,
  onProgress: (fraction: number) => void,
): Upload {
  const xhr = new XMLHttpRequest();
  const done = new Promise<AttachmentView>((resolve, reject) => {
    xhr.open(
      "POST",
      `/api/channels/${encodeURIComponent(channelId)}/attachments?name=${encodeURIComponent(name)}`,
    );
    const csrf = api.csrfToken;
    if (csrf) xhr.setRequestHeader("x-csrf-token", csrf);
    xhr.setRequestHeader("content-type", "application/octet-stream");
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable && e.total > 0) onProgress(e.loaded / e.total);
    };
    xhr.onload = () => {
      if (xhr.status !== 201) return reject(uploadError(xhr));
      onProgress(1);
      resolve(JSON.parse(xhr.responseText) as AttachmentView);
    };
    xhr.onerror = () =>
      reject(
        new ApiError(
          0,
          "network",
          "the upload could not reach the server; check the connection and try again",
        ),
      );
    xhr.onabort = () => reject(new ApiError(0, "aborted", "the upload was cancelled"));
    xhr.send(file);
  });
  return { done, abort: () => xhr.abort() };
}

/** The URL the file is served at to the chat's readers. */
export function attachmentUrl(channelId: string, fileId: string): string {
  return `/api/channels/${encodeURIComponent(channelId)}/attachments/${encodeURIComponent(fileId)}`;
}
