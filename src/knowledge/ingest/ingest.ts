/**
 * The ingestion run: for each file, read, hash (an unchanged file is a no-op), extract, chunk, embed
 * and write. Small files are gathered until they hold `embedBatch` child chunks (or for half a
 * second), then embedded with one request and written in one transaction; a file is never split
 * across transactions. Progress is
 * reported as files finish; an aborted signal stops the batch between files (or mid-embedding), and
 * files written before that stay indexed.
 */
import { readFile } from "node:fs/promises";
import { DimsumError, toDimsumError } from "../../errors.js";
import type { Embedder } from "../../memory/types.js";
import { formatOf, looksLikeText } from "../formats/detect.js";
import type { KnowledgeRepository, PreparedDocument, WriteReport } from "../store/knowledge-repository.js";
import type {
  ChunkingOptions,
  IngestFileResult,
  IngestOptions,
  IngestProgress,
  IngestResult,
  IngestSource,
} from "../types.js";
import { collectSources, DEFAULT_MAX_FILE_BYTES, type FileTask, formatBytes } from "./collect.js";
import { contentHash, prepareDocument } from "./prepare.js";

export interface IngestContext {
  repo: KnowledgeRepository;
  embedder?: Embedder | undefined;
  chunking: ChunkingOptions;
  maxFileBytes?: number | undefined;
  maxFiles?: number | undefined;
  /** Child chunks per embedding request and write transaction (default 64). */
  embedBatch?: number | undefined;
  /** Told about every committed write (the service patches its vector indexes). */
  afterWrite?: ((report: WriteReport) => void) | undefined;
  cwd?: string | undefined;
}

const FLUSH_AFTER_MS = 500;

interface Pending {
  task: FileTask;
  doc: PreparedDocument;
  updated: boolean;
}

function describe(err: unknown): string {
  const error = toDimsumError(err);
  return error.toLine();
}

function isAbort(err: unknown, signal: AbortSignal | undefined): boolean {
  return Boolean(signal?.aborted) || (err instanceof DimsumError && err.code === "aborted");
}

/** Ingests the sources into the base `kb`. Throws only for a bad batch (missing path, too many files) or a database failure. */
export async function runIngest(
  ctx: IngestContext,
  kb: { id: number; name: string },
  sources: readonly IngestSource[],
  options: IngestOptions = {},
): Promise<IngestResult> {
  const started = performance.now();
  const { signal, onProgress } = options;
  const collectOptions: Parameters<typeof collectSources>[1] = {};
  if (ctx.cwd) collectOptions.cwd = ctx.cwd;
  if (ctx.maxFiles !== undefined) collectOptions.maxFiles = ctx.maxFiles;
  if (signal) collectOptions.signal = signal;
  const { tasks, skipped } = await collectSources(sources, collectOptions);
  const files: IngestFileResult[] = [...skipped];
  const progress: IngestProgress = {
    done: 0,
    total: tasks.length,
    bytesDone: 0,
    bytesTotal: tasks.reduce((sum, t) => sum + t.size, 0),
  };
  const reportProgress = () => onProgress?.({ ...progress });
  const finish = (task: FileTask, result: IngestFileResult) => {
    files.push(result);
    progress.done++;
    progress.bytesDone += task.size;
  };
  const maxBytes = ctx.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const batch = Math.max(1, ctx.embedBatch ?? 64);
  const embedder = ctx.embedder;
  let pending: Pending[] = [];
  let pendingChildren = 0;
  let pendingSince = 0;
  // A walk cut short by the signal collected only part of the files: that batch counts as cancelled.
  let cancelled = Boolean(signal?.aborted);

  const flush = async () => {
    if (pending.length === 0) return;
    const items = pending;
    pending = [];
    pendingChildren = 0;
    let warning: string | undefined;
    if (embedder) {
      const children = items.flatMap((p) => p.doc.parents.flatMap((parent) => parent.children));
      try {
        const vectors = await embedder.embed(
          children.map((c) => c.indexText),
          signal,
        );
        children.forEach((child, i) => {
          const vector = vectors[i];
          if (vector) child.vector = vector;
        });
        for (const item of items) item.doc.embeddingModel = embedder.model;
      } catch (err) {
        if (isAbort(err, signal)) throw err;
        warning = `stored without vectors (search falls back to words for it): ${describe(err)}`;
      }
    }
    const report = await ctx.repo.writeDocuments(items.map((item) => item.doc));
    ctx.afterWrite?.(report);
    items.forEach(({ task, doc, updated }, i) => {
      const documentId = report.documentIds[i]!;
      const chunks = doc.parents.reduce((sum, p) => sum + p.children.length, 0);
      const result: IngestFileResult = {
        source: task.source,
        outcome: updated ? "updated" : "added",
        documentId: String(documentId),
        chunks,
      };
      if (warning) result.warning = warning;
      finish(task, result);
    });
    reportProgress();
  };

  reportProgress();
  try {
    for (const task of cancelled ? [] : tasks) {
      if (signal?.aborted) {
        cancelled = true;
        break;
      }
      progress.current = task.name;
      reportProgress();
      if (task.size > maxBytes) {
        finish(task, {
          source: task.source,
          outcome: "skipped",
          reason: `${formatBytes(task.size)}, over the limit of ${formatBytes(maxBytes)} per file (raise --max-file-mb to add it)`,
        });
        continue;
      }
      let data: Uint8Array;
      try {
        data = task.data ?? (await readFile(task.path!));
      } catch (err) {
        finish(task, {
          source: task.source,
          outcome: "failed",
          reason: `cannot read the file: ${(err as Error).message}`,
        });
        continue;
      }
      const format = task.format ?? (looksLikeText(data) ? formatOf("x.txt") : undefined);
      if (!format) {
        finish(task, { source: task.source, outcome: "skipped", reason: "unsupported file type (not text)" });
        continue;
      }
      const hash = contentHash(data);
      const existing = await ctx.repo.documentBySource(kb.id, task.source);
      const vectorsCurrent = !embedder || existing?.embedding_model === embedder.model;
      if (
        !options.force &&
        existing?.status === "ready" &&
        existing.content_hash === hash &&
        vectorsCurrent
      ) {
        finish(task, {
          source: task.source,
          outcome: "unchanged",
          documentId: String(existing.id),
          chunks: existing.chunk_count,
        });
        continue;
      }
      try {
        const input = { kbId: kb.id, source: task.source, name: task.name, data, hash, format };
        const doc = await prepareDocument(
          task.title ? { ...input, title: task.title } : input,
          ctx.chunking,
          signal,
        );
        if (pending.length === 0) pendingSince = performance.now();
        pending.push({ task, doc, updated: existing?.status === "ready" });
        pendingChildren += doc.parents.reduce((sum, p) => sum + p.children.length, 0);
      } catch (err) {
        if (isAbort(err, signal)) throw err;
        const reason = describe(err);
        await ctx.repo.writeFailed({
          kbId: kb.id,
          source: task.source,
          title: task.title ?? task.name,
          mime: format.mime,
          size: data.byteLength,
          hash,
          error: reason,
        });
        finish(task, { source: task.source, outcome: "failed", reason });
        continue;
      }
      // Flushed by size (one embedding request, one transaction) or by age, so progress keeps moving.
      if (pendingChildren >= batch || performance.now() - pendingSince >= FLUSH_AFTER_MS) await flush();
    }
    if (!cancelled) await flush();
  } catch (err) {
    if (!isAbort(err, signal)) throw err;
    cancelled = true;
  }
  delete progress.current;
  reportProgress();
  const count = (outcome: IngestFileResult["outcome"]) => files.filter((f) => f.outcome === outcome).length;
  return {
    kb: kb.name,
    files,
    added: count("added"),
    updated: count("updated"),
    unchanged: count("unchanged"),
    failed: count("failed"),
    skipped: count("skipped"),
    cancelled,
    bytes: progress.bytesDone,
    ms: Math.round(performance.now() - started),
  };
}
