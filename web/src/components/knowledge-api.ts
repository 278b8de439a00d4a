/**
 * The knowledge base API (`/api/kb`) for the web app: its types, typed calls over the shared
 * ApiClient, and the upload, sent with XMLHttpRequest because fetch cannot report upload progress.
 */
import type {
  Citation,
  DocumentRecord,
  IngestJobSnapshot,
  KnowledgeBaseInfo,
  KnowledgeSearchResult,
  KnowledgeStatus,
} from "../../../src/knowledge/types.js";
import type { Visibility } from "../../../src/shared/visibility.js";
import { type ApiClient, ApiError } from "../api.js";

// The server's own types: what the routes return is exactly these.
export type {
  Citation,
  IngestFileResult,
  IngestProgress,
  KnowledgeMode,
  KnowledgeStatus,
  Passage,
} from "../../../src/knowledge/types.js";

import { t } from "../i18n/index.js";
export type KnowledgeBase = KnowledgeBaseInfo;
export type KnowledgeDocument = DocumentRecord;
export type IngestJob = IngestJobSnapshot;
export type SearchResult = KnowledgeSearchResult;

/** What one upload may hold, as the server enforces it. */
export interface UploadLimits {
  maxFileBytes: number;
  maxFiles: number;
}

const enc = encodeURIComponent;

/** Typed calls of the knowledge base API. */
export function knowledgeApi(api: ApiClient) {
  return {
    list: () =>
      api.request<{ status: KnowledgeStatus; bases: KnowledgeBase[]; limits: UploadLimits }>(
        "GET",
        "/api/kb",
      ),
    create: (name: string, visibility?: { visibility: Visibility; allowedUsers: string[] }) =>
      api.request<KnowledgeBase>("POST", "/api/kb", { name, ...visibility }),
    /** Changes who sees a base (its owner or an admin). */
    setVisibility: (
      base: Pick<KnowledgeBase, "name" | "agentId">,
      patch: { visibility: Visibility; allowedUsers: string[] },
    ) =>
      api.request<KnowledgeBase>(
        "PATCH",
        `/api/kb/${enc(base.name)}${base.agentId ? `?agentId=${enc(base.agentId)}` : ""}`,
        patch,
      ),
    remove: (name: string) => api.request<void>("DELETE", `/api/kb/${enc(name)}`),
    documents: (name: string) => api.request<KnowledgeDocument[]>("GET", `/api/kb/${enc(name)}/documents`),
    removeDocument: (name: string, id: string) =>
      api.request<void>("DELETE", `/api/kb/${enc(name)}/documents/${enc(id)}`),
    job: (id: string) => api.request<IngestJob>("GET", `/api/kb/jobs/${enc(id)}`),
    cancel: (id: string) => api.request<IngestJob>("POST", `/api/kb/jobs/${enc(id)}/cancel`),
    search: (name: string, q: string) =>
      api.request<SearchResult>("GET", `/api/kb/${enc(name)}/search?q=${enc(q)}`),
  };
}

/** "p. 3" or "pp. 3–5", when the passage has pages. */
export function pageLabel(citation: Citation): string | undefined {
  const { pageStart, pageEnd } = citation;
  if (pageStart === undefined) return undefined;
  return pageEnd !== undefined && pageEnd !== pageStart
    ? t("kb.pages", { start: pageStart, end: pageEnd })
    : t("kb.page", { page: pageStart });
}

/** The link a citation opens: the source itself when it is a web address, else the passage in the list. */
export function citationHref(citation: Citation): string {
  return /^https?:\/\//i.test(citation.source) ? citation.source : `#passage-${citation.chunkId}`;
}

function uploadError(xhr: XMLHttpRequest): ApiError {
  try {
    const body = JSON.parse(xhr.responseText) as { error?: { code?: string; message?: string } };
    return new ApiError(xhr.status, body.error?.code ?? "error", body.error?.message ?? `HTTP ${xhr.status}`);
  } catch {
    return new ApiError(xhr.status, "error", `upload failed (HTTP ${xhr.status})`);
  }
}

/** Uploads files to a base; `onProgress` gets the fraction of bytes sent. Resolves to the ingestion job id. */
export function uploadFiles(
  api: ApiClient,
  kb: string,
  files: readonly File[],
  onProgress: (fraction: number) => void,
): Promise<string> {
  const form = new FormData();
  for (const file of files) form.append("files", file, file.name);
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", `/api/kb/${enc(kb)}/upload`);
    const csrf = api.csrfToken;
    if (csrf) xhr.setRequestHeader("x-csrf-token", csrf);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable && e.total > 0) onProgress(e.loaded / e.total);
    };
    xhr.onload = () => {
      if (xhr.status !== 202) return reject(uploadError(xhr));
      onProgress(1);
      resolve((JSON.parse(xhr.responseText) as { jobId: string }).jobId);
    };
    xhr.onerror = () => reject(new ApiError(0, "network", "the upload could not reach the server"));
    xhr.send(form);
  });
}
