/**
 * The part of a MemoryStore that is the same on every database: checking and cleaning what callers
 * pass, limits, computing embeddings outside any transaction (so a slow embedding API never holds a
 * lock), and falling back to BM25 with a warning when embedding fails. A backend does the storage.
 */

import { DimsumError } from "../errors.js";
import { queryTerms } from "../store/text/terms.js";
import type { ArchivalOptions, ArchivalSearch } from "./archival-rules.js";
import type { CoreEdit, CoreMemory } from "./core-rules.js";
import { type CleanInput, cleanInput, requireUser } from "./input.js";
import type { SearchWeights } from "./ranking.js";
import { parseMemoryId } from "./rows.js";
import type {
  CoreBlock,
  CoreEditResult,
  Embedder,
  ListMemoriesOptions,
  MemoryEdit,
  MemoryRecord,
  MemoryScope,
  MemorySearchHit,
  MemorySearchQuery,
  MemorySearchResult,
  MemoryStatus,
  MemoryStore,
  MemoryType,
  RecallHit,
  RecallQuery,
  RememberInput,
  RememberResult,
} from "./types.js";
import { normalize } from "./vectors/quantized-index.js";

/** Options every memory store takes, whatever its database. */
export interface MemoryStoreOptions extends Omit<ArchivalOptions, "embeddingModel"> {
  /** Without one, retrieval is BM25 only (`mode: "bm25"`). */
  embedder?: Embedder;
  /** Default character limit of a core memory block (2,000). */
  coreLimit?: number;
  /** Longest archival memory accepted, in characters (2,000). */
  maxMemoryChars?: number;
  /** Receives one line when embedding fails and a write or search goes on without vectors. */
  warn?: (message: string) => void;
  weights?: SearchWeights;
}

/** One memory to write: cleaned, with its unit vector (if embedding worked). */
export interface PendingWrite {
  input: CleanInput;
  vector: Float32Array | undefined;
  merge: boolean;
}

/** A memory's fields as a person edited them. */
export interface EditedFields {
  text: string;
  type: MemoryType;
  tags: string[];
  importance: number;
}

type Awaitable<T> = T | Promise<T>;

/** Storage of one database; ids are the numeric row ids, users are checked before these are called. */
export interface MemoryBackend {
  /** Writes the memories in one transaction, in order (each may merge into an earlier one). */
  write(pending: PendingWrite[]): Awaitable<RememberResult[]>;
  search(query: ArchivalSearch): Awaitable<MemorySearchHit[]>;
  get(userId: string, id: number): Awaitable<MemoryRecord | undefined>;
  list(
    userId: string,
    agentId: string | undefined,
    type: MemoryType | undefined,
    limit: number,
    offset: number,
  ): Awaitable<MemoryRecord[]>;
  count(userId: string): Awaitable<number>;
  forget(userId: string, id: number): Awaitable<boolean>;
  /**
   * Replaces a memory's text, type, tags and importance as a person edited them; `vector` is the new
   * text's (unit length) when the text changed, or undefined to drop the old one.
   */
  edit(
    userId: string,
    id: number,
    next: EditedFields,
    vector: Float32Array | undefined,
  ): Awaitable<MemoryRecord | undefined>;
  touch(userId: string, ids: readonly number[]): Awaitable<void>;
  coreBlocks(scope: MemoryScope): Awaitable<CoreBlock[]>;
  allCoreBlocks(userId: string): Awaitable<CoreBlock[]>;
  deleteCoreBlock(scope: MemoryScope, label: string): Awaitable<boolean>;
  coreEdit(scope: MemoryScope, label: string, edit: CoreEdit): Awaitable<CoreEditResult>;
  recall(query: RecallQuery): Awaitable<RecallHit[]>;
}

/** The archival side of a backend, as each database's archival module gives it. */
export type ArchivalBackend = Pick<
  MemoryBackend,
  "search" | "get" | "list" | "count" | "forget" | "edit" | "touch"
>;

/** A backend of its parts: `write` (the memories, in one transaction), archival, core and recall. */
export function memoryBackend(
  write: MemoryBackend["write"],
  archival: ArchivalBackend,
  core: CoreMemory,
  recall: { search(query: RecallQuery): Awaitable<RecallHit[]> },
): MemoryBackend {
  return {
    write,
    search: (query) => archival.search(query),
    get: (userId, id) => archival.get(userId, id),
    list: (userId, agentId, type, limit, offset) => archival.list(userId, agentId, type, limit, offset),
    count: (userId) => archival.count(userId),
    forget: (userId, id) => archival.forget(userId, id),
    edit: (userId, id, next, vector) => archival.edit(userId, id, next, vector),
    touch: (userId, ids) => archival.touch(userId, ids),
    coreBlocks: (scope) => core.blocks(scope),
    allCoreBlocks: (userId) => core.all(userId),
    deleteCoreBlock: (scope, label) => core.remove(scope, label),
    coreEdit: (scope, label, edit) => core.edit(scope, label, edit),
    recall: (query) => recall.search(query),
  };
}

/** The archival and core options of the store's options. */
export function backendOptions(options: MemoryStoreOptions): {
  archival: ArchivalOptions;
  core: { defaultLimit?: number; now?: () => number };
} {
  const archival: ArchivalOptions = { ...options };
  if (options.embedder) archival.embeddingModel = options.embedder.model;
  const core: { defaultLimit?: number; now?: () => number } = {};
  if (options.coreLimit !== undefined) core.defaultLimit = options.coreLimit;
  if (options.now !== undefined) core.now = options.now;
  return { archival, core };
}

const DEFAULT_LIMIT = 10;
const MAX_LIMIT = 100;

function clampLimit(limit: number | undefined, fallback: number, max: number): number {
  const n = Math.floor(Number(limit ?? fallback));
  return Number.isFinite(n) ? Math.min(max, Math.max(1, n)) : fallback;
}

function describe(err: unknown): string {
  if (err instanceof DimsumError) return err.toLine();
  return err instanceof Error ? err.message : String(err);
}

/** A MemoryStore over a backend; `guard` maps the backend's errors (and joins its transactions). */
export abstract class MemoryStoreFront implements MemoryStore {
  protected readonly embedder: Embedder | undefined;
  private readonly warn: (message: string) => void;

  protected constructor(protected readonly options: MemoryStoreOptions) {
    this.embedder = options.embedder;
    this.warn = options.warn ?? ((message) => process.emitWarning(message, "DimsumMemoryWarning"));
  }

  protected abstract readonly backend: MemoryBackend;

  /** Runs a backend call, mapping its errors to DimsumErrors that say what failed. */
  protected abstract guard<T>(action: "read" | "write to", body: () => Awaitable<T>): Promise<T>;

  /** Called when a write failed, before the error is thrown (e.g. to drop caches it patched). */
  protected writeFailed(): void {}

  status(): MemoryStatus {
    return this.embedder ? { mode: "hybrid", embeddingModel: this.embedder.model } : { mode: "bm25" };
  }

  async remember(input: RememberInput, options: { signal?: AbortSignal } = {}): Promise<RememberResult> {
    const [result] = await this.rememberMany([input], options);
    return result!;
  }

  /**
   * Stores several memories with one embedding request and one transaction; each may merge, unless
   * `merge: false` (bulk imports of known-distinct texts skip the near-duplicate search).
   */
  async rememberMany(
    inputs: RememberInput[],
    options: { signal?: AbortSignal; merge?: boolean } = {},
  ): Promise<RememberResult[]> {
    const clean = inputs.map((input) => cleanInput(input, this.options.maxMemoryChars));
    const { vectors, warning } = await this.embedAll(
      clean.map((c) => c.text),
      options.signal,
    );
    const pending = clean.map((input, i) => ({ input, vector: vectors?.[i], merge: options.merge ?? true }));
    if (pending.length === 0) return [];
    const results = await this.guard("write to", async () => {
      try {
        return await this.backend.write(pending);
      } catch (err) {
        this.writeFailed();
        throw err;
      }
    });
    if (warning) for (const result of results) result.warning = warning;
    return results;
  }

  async search(query: MemorySearchQuery): Promise<MemorySearchResult> {
    const userId = requireUser(query.userId);
    const limit = clampLimit(query.limit, DEFAULT_LIMIT, MAX_LIMIT);
    const { vectors, warning } = await this.embedAll(query.query.trim() ? [query.query] : [], query.signal);
    const vector = vectors?.[0];
    const hits = await this.guard("read", () =>
      this.backend.search({
        userId,
        agentId: query.agentId,
        type: query.type,
        terms: queryTerms(query.query),
        vector,
        limit,
        minSimilarity: query.minSimilarity ?? 0,
      }),
    );
    const result: MemorySearchResult = { mode: vector ? "hybrid" : "bm25", hits };
    if (warning) result.warning = warning;
    return result;
  }

  async get(userId: string, id: string): Promise<MemoryRecord | undefined> {
    const rowId = parseMemoryId(id);
    if (rowId === undefined) return undefined;
    return this.guard("read", () => this.backend.get(requireUser(userId), rowId));
  }

  async list(userId: string, options: ListMemoriesOptions = {}): Promise<MemoryRecord[]> {
    const limit = clampLimit(options.limit, 50, 10_000);
    const offset = Math.max(0, Math.floor(options.offset ?? 0));
    return this.guard("read", () =>
      this.backend.list(requireUser(userId), options.agentId, options.type, limit, offset),
    );
  }

  async count(userId: string): Promise<number> {
    return this.guard("read", () => this.backend.count(requireUser(userId)));
  }

  async forget(userId: string, id: string): Promise<boolean> {
    const rowId = parseMemoryId(id);
    if (rowId === undefined) return false;
    return this.guard("write to", () => this.backend.forget(requireUser(userId), rowId));
  }

  async update(userId: string, id: string, edit: MemoryEdit): Promise<MemoryRecord | undefined> {
    const rowId = parseMemoryId(id);
    if (rowId === undefined) return undefined;
    const current = await this.get(userId, id);
    if (!current) return undefined;
    const clean = cleanInput(
      {
        userId,
        text: edit.text ?? current.text,
        type: edit.type ?? current.type,
        tags: edit.tags ?? current.tags,
        importance: edit.importance ?? current.importance,
      },
      this.options.maxMemoryChars,
    );
    const changed = clean.text !== current.text;
    const { vectors } = changed ? await this.embedAll([clean.text], undefined) : {};
    return this.guard("write to", () =>
      this.backend.edit(
        clean.userId,
        rowId,
        { text: clean.text, type: clean.type, tags: clean.tags, importance: clean.importance },
        vectors?.[0],
      ),
    );
  }

  async touch(userId: string, ids: readonly string[]): Promise<void> {
    const rowIds = ids.map(parseMemoryId).filter((id): id is number => id !== undefined);
    if (rowIds.length > 0)
      await this.guard("write to", () => this.backend.touch(requireUser(userId), rowIds));
  }

  async coreBlocks(scope: MemoryScope): Promise<CoreBlock[]> {
    requireUser(scope.userId);
    return this.guard("read", () => this.backend.coreBlocks(scope));
  }

  async allCoreBlocks(userId: string): Promise<CoreBlock[]> {
    return this.guard("read", () => this.backend.allCoreBlocks(requireUser(userId)));
  }

  async deleteCoreBlock(scope: MemoryScope, label: string): Promise<boolean> {
    requireUser(scope.userId);
    return this.guard("write to", () => this.backend.deleteCoreBlock(scope, label));
  }

  async coreAppend(scope: MemoryScope, label: string, text: string): Promise<CoreEditResult> {
    requireUser(scope.userId);
    return this.guard("write to", () => this.backend.coreEdit(scope, label, { kind: "append", text }));
  }

  async coreReplace(
    scope: MemoryScope,
    label: string,
    oldText: string,
    newText: string,
  ): Promise<CoreEditResult> {
    requireUser(scope.userId);
    return this.guard("write to", () =>
      this.backend.coreEdit(scope, label, { kind: "replace", oldText, newText }),
    );
  }

  async setCoreBlock(
    scope: MemoryScope,
    label: string,
    value: string,
    options: { limit?: number } = {},
  ): Promise<CoreEditResult> {
    requireUser(scope.userId);
    return this.guard("write to", () =>
      this.backend.coreEdit(scope, label, { kind: "set", value, limit: options.limit }),
    );
  }

  async recallSearch(query: RecallQuery): Promise<RecallHit[]> {
    requireUser(query.userId);
    return this.guard("read", () => this.backend.recall(query));
  }

  /** Unit vectors for the texts, or none (with a warning) when there is no embedder or it failed. */
  private async embedAll(
    texts: string[],
    signal: AbortSignal | undefined,
  ): Promise<{ vectors?: Float32Array[]; warning?: string }> {
    if (!this.embedder || texts.length === 0) return {};
    try {
      const vectors = await this.embedder.embed(texts, signal);
      if (vectors.length !== texts.length)
        throw new Error(`got ${vectors.length} vectors for ${texts.length} texts`);
      return { vectors: vectors.map((v) => normalize(Float32Array.from(v))) };
    } catch (err) {
      if (signal?.aborted)
        throw new DimsumError("aborted", "The memory operation was aborted.", { cause: err });
      const warning = `embedding with ${this.embedder.model} failed, so BM25 alone was used: ${describe(err)}`;
      this.warn(warning);
      return { warning };
    }
  }
}
