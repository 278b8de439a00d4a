/**
 * The knowledge base facade over a KnowledgeRepository (SQLite or PostgreSQL): bases (shared or per
 * agent), ingestion (direct or as background jobs), reindexing, document management, hybrid search
 * and status. `KnowledgeService.sqlite(db)` builds one over a SQLite connection.
 */

import { stat } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";
import type { Database as SqliteDatabase } from "better-sqlite3";
import { DimsumError } from "../errors.js";
import { RRF_K } from "../memory/ranking.js";
import type { Embedder } from "../memory/types.js";
import { canUseResource, type Visible, visibleOf } from "../shared/visibility.js";
import { type IngestContext, runIngest } from "./ingest/ingest.js";
import { IngestJob } from "./ingest/ingest-job.js";
import { storedIndexText } from "./ingest/prepare.js";
import { type SearchContext, searchChunks } from "./retrieval/search.js";
import { ChunkVectors } from "./store/chunk-vectors.js";
import type { KnowledgeRepository } from "./store/knowledge-repository.js";
import { type BaseRow, type DocumentRow, toBaseInfo, toDocumentRecord } from "./store/rows.js";
import { SqliteKnowledgeRepository } from "./store/sqlite-knowledge-repository.js";
import type {
  ChunkingOptions,
  DocumentRecord,
  IngestFileResult,
  IngestJobSnapshot,
  IngestLimits,
  IngestOptions,
  IngestResult,
  IngestSource,
  KnowledgeBaseInfo,
  KnowledgeSearchQuery,
  KnowledgeSearchResult,
  KnowledgeStatus,
  Reranker,
} from "./types.js";

export interface KnowledgeServiceOptions {
  /** Without one, retrieval is BM25 alone and `status()` says so. */
  embedder?: Embedder;
  /** Optional stage 3; see `createModelReranker`. */
  reranker?: Reranker;
  chunking?: ChunkingOptions;
  limits?: IngestLimits;
  /** RRF constant (default 60). */
  rrfK?: number;
  /** Depth of each child list before fusion (default 50; at least 3 × topK). */
  candidates?: number;
  /** Parents the reranker scores (default 20). */
  rerankTopN?: number;
  /** Deadline for reranking (default 15 s). */
  rerankTimeoutMs?: number;
  /**
   * Vector hits below this cosine are dropped before fusion (default 0: only unrelated or opposite
   * ones). The right bar depends on the embedding model; 0.2-0.3 suits many.
   */
  minSimilarity?: number;
  /** BM25 work cap in postings (see chunk-bm25.ts); used by `KnowledgeService.sqlite`. */
  maxPostings?: number;
  /** Child chunks per embedding request while ingesting (default 64). */
  embedBatch?: number;
  /** Folder relative paths are resolved against (default process.cwd()). */
  cwd?: string;
  /** The clock of `KnowledgeService.sqlite`'s repository. */
  now?: () => number;
}

/** What a knowledge base may be called: up to 64 letters, digits, '-', '_' or '.', starting with a letter or digit. */
export const BASE_NAME = /^[\p{L}\p{N}][\p{L}\p{N}_.-]{0,63}$/u;
const KEPT_JOBS = 100;

function checkName(name: string): void {
  if (!BASE_NAME.test(name)) {
    throw new DimsumError("config", `"${name}" is not a valid knowledge base name`, {
      hint: "use up to 64 letters, digits, '-', '_' or '.', starting with a letter or digit",
    });
  }
}

function unknownBase(name: string): DimsumError {
  return new DimsumError("config", `no knowledge base named "${name}"`, {
    hint: `add documents to create it: dimsum kb add ${name} <files or folders>`,
  });
}

export class KnowledgeService {
  private readonly vectors: ChunkVectors | undefined;
  private readonly jobList = new Map<string, IngestJob>();

  /** The service over a repository (SQLite or PostgreSQL); the caller keeps its database and closes it. */
  constructor(
    private readonly repo: KnowledgeRepository,
    private readonly options: KnowledgeServiceOptions = {},
  ) {
    this.vectors = options.embedder ? new ChunkVectors(repo, options.embedder.model) : undefined;
  }

  /** The service over a SQLite connection from `openDatabase` (migrated), which the caller closes. */
  static sqlite(db: SqliteDatabase, options: KnowledgeServiceOptions = {}): KnowledgeService {
    return new KnowledgeService(new SqliteKnowledgeRepository(db, options.now, options.maxPostings), options);
  }

  /** How retrieval runs (hybrid or BM25 alone, and why), with corpus totals. */
  async status(): Promise<KnowledgeStatus> {
    const model = this.options.embedder?.model;
    const [counts, bases] = await Promise.all([this.repo.counts(model), this.repo.baseCount()]);
    const status: KnowledgeStatus = {
      mode: model ? "hybrid" : "bm25",
      note: "",
      bases,
      documents: counts.documents,
      childChunks: counts.chunks,
      chunksWithoutVectors: model ? counts.chunks - counts.withVectors : counts.chunks,
    };
    if (model) status.embeddingModel = model;
    if (this.options.reranker) status.reranker = this.options.reranker.name;
    status.note = !model
      ? "BM25 only: no embedding model is configured (set DIMSUM_EMBEDDING_MODEL for hybrid retrieval)"
      : status.chunksWithoutVectors > 0
        ? `hybrid (BM25 + ${model}); ${status.chunksWithoutVectors} chunks have no vector of this model yet (run dimsum kb reindex)`
        : `hybrid (BM25 + ${model})`;
    return status;
  }

  /** Creates a base (shared, or the agent's own); returns the existing one if it is there already. */
  async createBase(
    name: string,
    options: { agentId?: string; description?: string } & Visible = {},
  ): Promise<KnowledgeBaseInfo> {
    checkName(name);
    const visible: Visible = {
      ...(options.ownerId !== undefined ? { ownerId: options.ownerId } : {}),
      ...(options.visibility !== undefined ? { visibility: options.visibility } : {}),
      ...(options.allowedUsers !== undefined ? { allowedUsers: [...new Set(options.allowedUsers)] } : {}),
    };
    return toBaseInfo(await this.repo.ensureBase(name, options.agentId, options.description, visible));
  }

  /** Changes who sees a base; undefined when there is none by that name. */
  async setVisibility(
    name: string,
    agentId: string | undefined,
    patch: Pick<Visible, "visibility" | "allowedUsers">,
  ): Promise<KnowledgeBaseInfo | undefined> {
    const row = await this.repo.findBase(name, agentId);
    if (!row) return undefined;
    const current = toBaseInfo(row);
    await this.repo.setVisibility(row.id, {
      visibility: patch.visibility ?? current.visibility ?? "everyone",
      allowedUsers: [...new Set(patch.allowedUsers ?? current.allowedUsers ?? [])],
    });
    return this.getBase(name, agentId);
  }

  /** Bases visible to an agent (shared plus its own), or every base with `all`. */
  async listBases(options: { agentId?: string; all?: boolean } = {}): Promise<KnowledgeBaseInfo[]> {
    const agent = options.all ? null : (options.agentId ?? "");
    return (await this.repo.listBases(agent)).map(toBaseInfo);
  }

  async getBase(name: string, agentId?: string): Promise<KnowledgeBaseInfo | undefined> {
    const row = await this.repo.findBase(name, agentId);
    return row && toBaseInfo(await this.repo.withCounts(row));
  }

  /** Deletes a base with all its documents; false when there is none by that name. */
  async removeBase(name: string, agentId?: string): Promise<boolean> {
    const row = await this.repo.findBase(name, agentId);
    if (!row) return false;
    await this.repo.deleteBase(row.id);
    return true;
  }

  async listDocuments(kb: string, agentId?: string): Promise<DocumentRecord[]> {
    const base = await this.requireBase(kb, agentId);
    return (await this.repo.documents(base.id)).map(toDocumentRecord);
  }

  /**
   * Removes one document, named by id (`12` or `#12`), source, a path relative to the working
   * folder, or a file name that matches exactly one document. Returns it, or undefined when none matches.
   */
  async removeDocument(kb: string, ref: string, agentId?: string): Promise<DocumentRecord | undefined> {
    const base = await this.requireBase(kb, agentId);
    const doc = await this.findDocument(base, ref);
    if (!doc) return undefined;
    const report = await this.repo.deleteDocument(base.id, doc.id);
    this.vectors?.afterWrite(report);
    return toDocumentRecord(doc);
  }

  /** Ingests files, folders or uploads into a base (created when missing). See IngestResult for outcomes. */
  async ingest(
    kb: string,
    sources: readonly IngestSource[],
    options: IngestOptions = {},
  ): Promise<IngestResult> {
    checkName(kb);
    const base = await this.repo.ensureBase(kb, options.agentId);
    return runIngest(this.ingestContext(), base, sources, options);
  }

  /** Starts an ingestion in the background; poll or subscribe to the returned job. */
  startIngest(
    kb: string,
    sources: readonly IngestSource[],
    options: Omit<IngestOptions, "signal" | "onProgress"> = {},
  ): IngestJob {
    const job = new IngestJob(kb, (signal, onProgress) =>
      this.ingest(kb, sources, { ...options, signal, onProgress }),
    );
    this.jobList.set(job.id, job);
    for (const [id, old] of this.jobList) {
      if (this.jobList.size <= KEPT_JOBS) break;
      if (old.status !== "running") this.jobList.delete(id);
    }
    return job;
  }

  job(id: string): IngestJob | undefined {
    return this.jobList.get(id);
  }

  jobs(): IngestJobSnapshot[] {
    return [...this.jobList.values()].map((j) => j.snapshot());
  }

  /**
   * Rebuilds a base: documents whose source file is readable are extracted and embedded again;
   * the rest (uploads, moved files) keep their chunks and, with an embedder, get fresh vectors.
   */
  async reindex(kb: string, options: Omit<IngestOptions, "force"> = {}): Promise<IngestResult> {
    const base = await this.requireBase(kb, options.agentId);
    const docs = await this.repo.documents(base.id);
    const onDisk: DocumentRow[] = [];
    const elsewhere: DocumentRow[] = [];
    for (const doc of docs) {
      const info = isAbsolute(doc.source) ? await stat(doc.source).catch(() => null) : null;
      (info?.isFile() ? onDisk : elsewhere).push(doc);
    }
    const result = await runIngest(
      // The batch limit guards against adding too much by mistake; a base's own documents are fine.
      { ...this.ingestContext(), maxFiles: Number.POSITIVE_INFINITY },
      base,
      onDisk.map((d) => ({ kind: "path" as const, path: d.source })),
      { ...options, force: true },
    );
    const extra: IngestFileResult[] = [];
    for (const doc of elsewhere) {
      if (options.signal?.aborted) {
        result.cancelled = true;
        break;
      }
      const file = await this.reembed(base, doc, options.signal);
      if (isAbsolute(doc.source) && file.outcome !== "failed") {
        const gone = "the source file is gone; its stored chunks were kept (dimsum kb remove drops them)";
        if (file.outcome === "updated") file.warning = gone;
        else file.reason = gone;
      }
      extra.push(file);
    }
    result.files.push(...extra);
    result.updated += extra.filter((f) => f.outcome === "updated").length;
    result.skipped += extra.filter((f) => f.outcome === "skipped").length;
    result.failed += extra.filter((f) => f.outcome === "failed").length;
    return result;
  }

  /** Hybrid search with citations; see the pipeline in retrieval/search.ts. */
  async search(query: KnowledgeSearchQuery): Promise<KnowledgeSearchResult> {
    if (query.query.trim() === "") {
      throw new DimsumError("tool_args", "the search query is empty", { hint: "pass the words to look for" });
    }
    const bases = await this.basesFor(query);
    const ctx: SearchContext = {
      repo: this.repo,
      embedder: this.options.embedder,
      vectors: this.vectors,
      reranker: this.options.reranker,
      rrfK: this.options.rrfK ?? RRF_K,
      candidates: this.options.candidates ?? 50,
      rerankTopN: this.options.rerankTopN ?? 20,
      rerankTimeoutMs: this.options.rerankTimeoutMs ?? 15_000,
      minSimilarity: this.options.minSimilarity ?? 0,
    };
    return searchChunks(ctx, bases, query);
  }

  private async basesFor(query: KnowledgeSearchQuery): Promise<BaseRow[]> {
    const names = query.kb === undefined ? undefined : Array.isArray(query.kb) ? query.kb : [query.kb];
    const viewer = query.viewer;
    if (!names) {
      const bases = await this.repo.visibleBases(query.agentId);
      return viewer ? bases.filter((b) => canUseResource(viewer, visibleOf(b))) : bases;
    }
    return Promise.all(
      names.map(async (name) => {
        const row = await this.requireBase(name, query.agentId);
        // A base the person may not see is unknown to them, the same as one that does not exist.
        if (viewer && !canUseResource(viewer, visibleOf(row))) throw unknownBase(name);
        return row;
      }),
    );
  }

  private async requireBase(name: string, agentId?: string): Promise<BaseRow> {
    const row = await this.repo.findBase(name, agentId);
    if (!row) throw unknownBase(name);
    return row;
  }

  private async findDocument(base: BaseRow, ref: string): Promise<DocumentRow | undefined> {
    const trimmed = ref.trim();
    const docs = await this.repo.documents(base.id);
    const id = /^#?(\d+)$/.exec(trimmed)?.[1];
    if (id) {
      const byId = docs.find((d) => d.id === Number(id));
      if (byId) return byId;
    }
    const absolute = resolve(this.options.cwd ?? process.cwd(), trimmed);
    const exact = docs.find((d) => d.source === trimmed || d.source === absolute);
    if (exact) return exact;
    const byName = docs.filter((d) => d.source.endsWith(`/${trimmed}`) || d.source.endsWith(`\\${trimmed}`));
    if (byName.length > 1) {
      throw new DimsumError("config", `"${ref}" matches ${byName.length} documents in ${base.name}`, {
        hint: `name one by id or full path: ${byName.map((d) => `#${d.id} ${d.source}`).join(", ")}`,
      });
    }
    return byName[0];
  }

  private async reembed(base: BaseRow, doc: DocumentRow, signal?: AbortSignal): Promise<IngestFileResult> {
    const embedder = this.options.embedder;
    if (!embedder || doc.status !== "ready") {
      return {
        source: doc.source,
        outcome: "skipped",
        reason: "source is not a readable file; kept as stored",
      };
    }
    const children = await this.repo.childrenOf(doc.id);
    try {
      const texts = children.map((c) => storedIndexText(c, doc.title));
      const vectors = await embedder.embed(texts, signal);
      const map = new Map<number, Float32Array>();
      children.forEach((c, i) => {
        const vector = vectors[i];
        if (vector) map.set(c.id, vector);
      });
      await this.repo.setVectors(doc.id, base.id, embedder.model, map);
      // Rare (reindex only): simpler to reload the base's index than to patch it.
      this.vectors?.clear();
      return { source: doc.source, outcome: "updated", documentId: String(doc.id), chunks: children.length };
    } catch (err) {
      return {
        source: doc.source,
        outcome: "failed",
        reason: `vectors not refreshed: ${(err as Error).message}`,
      };
    }
  }

  private ingestContext(): IngestContext {
    return {
      repo: this.repo,
      embedder: this.options.embedder,
      chunking: this.options.chunking ?? {},
      maxFileBytes: this.options.limits?.maxFileBytes,
      maxFiles: this.options.limits?.maxFiles,
      embedBatch: this.options.embedBatch,
      cwd: this.options.cwd,
      afterWrite: (report) => this.vectors?.afterWrite(report),
    };
  }
}
