/** MemoryStore on SQLite: archival memories, core blocks and recall search over one connection. */
import type { Database } from "better-sqlite3";
import { DimsumError } from "../errors.js";
import { joinGroupCommit } from "../store/group-commit.js";
import { storeError } from "../store/sqlite-errors.js";
import { type CleanInput, cleanInput, requireUser } from "./input.js";
import type { SearchWeights } from "./ranking.js";
import { ArchivalMemory, type ArchivalOptions } from "./sqlite/archival.js";
import { SqliteCoreMemory } from "./sqlite/core-memory.js";
import { RecallSearch } from "./sqlite/recall.js";
import { parseMemoryId } from "./sqlite/rows.js";
import { queryTerms } from "./text/terms.js";
import type {
  CoreBlock,
  CoreEditResult,
  Embedder,
  ListMemoriesOptions,
  MemoryEdit,
  MemoryRecord,
  MemoryScope,
  MemorySearchQuery,
  MemorySearchResult,
  MemoryStatus,
  MemoryStore,
  RecallHit,
  RecallQuery,
  RememberInput,
  RememberResult,
} from "./types.js";
import { normalize } from "./vectors/quantized-index.js";

export interface SqliteMemoryStoreOptions extends Omit<ArchivalOptions, "embeddingModel"> {
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

interface PendingWrite {
  input: CleanInput;
  vector: Float32Array | undefined;
  merge: boolean;
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

export class SqliteMemoryStore implements MemoryStore {
  private readonly file: string;
  private readonly db: Database;
  private readonly archival: ArchivalMemory;
  private readonly core: SqliteCoreMemory;
  private readonly recall: RecallSearch;
  private readonly embedder: Embedder | undefined;
  private readonly warn: (message: string) => void;
  private readonly rememberTx: (inputs: PendingWrite[]) => RememberResult[];

  /** `db` must come from `openDatabase` (migrated); the caller keeps ownership and closes it. */
  constructor(
    db: Database,
    private readonly options: SqliteMemoryStoreOptions = {},
  ) {
    this.file = db.name;
    this.db = db;
    this.embedder = options.embedder;
    this.warn = options.warn ?? ((message) => process.emitWarning(message, "DimsumMemoryWarning"));
    const archivalOptions: ArchivalOptions = { ...options };
    if (options.embedder) archivalOptions.embeddingModel = options.embedder.model;
    this.archival = new ArchivalMemory(db, archivalOptions);
    const coreOptions: { defaultLimit?: number; now?: () => number } = {};
    if (options.coreLimit !== undefined) coreOptions.defaultLimit = options.coreLimit;
    if (options.now !== undefined) coreOptions.now = options.now;
    this.core = new SqliteCoreMemory(db, coreOptions);
    this.recall = new RecallSearch(db);
    this.rememberTx = db.transaction((inputs: PendingWrite[]) =>
      inputs.map(({ input, vector, merge }) => this.archival.remember(input, vector, merge)),
    );
  }

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
    const results = this.guard("write to", () => {
      try {
        return this.rememberTx(pending);
      } catch (err) {
        // Vector caches were patched inside the transaction that just rolled back.
        this.archival.dropCaches();
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
    const hits = this.guard("read", () =>
      this.archival.search({
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
    return this.guard("read", () => this.archival.get(requireUser(userId), rowId));
  }

  async list(userId: string, options: ListMemoriesOptions = {}): Promise<MemoryRecord[]> {
    const limit = clampLimit(options.limit, 50, 10_000);
    const offset = Math.max(0, Math.floor(options.offset ?? 0));
    return this.guard("read", () =>
      this.archival.list(requireUser(userId), options.agentId, options.type, limit, offset),
    );
  }

  async count(userId: string): Promise<number> {
    return this.guard("read", () => this.archival.count(requireUser(userId)));
  }

  async forget(userId: string, id: string): Promise<boolean> {
    const rowId = parseMemoryId(id);
    if (rowId === undefined) return false;
    return this.guard("write to", () => this.archival.forget(requireUser(userId), rowId));
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
      this.archival.edit(
        clean.userId,
        rowId,
        { text: clean.text, type: clean.type, tags: clean.tags, importance: clean.importance },
        vectors?.[0],
      ),
    );
  }

  async touch(userId: string, ids: readonly string[]): Promise<void> {
    const rowIds = ids.map(parseMemoryId).filter((id): id is number => id !== undefined);
    if (rowIds.length > 0) this.guard("write to", () => this.archival.touch(requireUser(userId), rowIds));
  }

  async coreBlocks(scope: MemoryScope): Promise<CoreBlock[]> {
    requireUser(scope.userId);
    return this.guard("read", () => this.core.blocks(scope));
  }

  async allCoreBlocks(userId: string): Promise<CoreBlock[]> {
    return this.guard("read", () => this.core.all(requireUser(userId)));
  }

  async deleteCoreBlock(scope: MemoryScope, label: string): Promise<boolean> {
    requireUser(scope.userId);
    return this.guard("write to", () => this.core.remove(scope, label));
  }

  async coreAppend(scope: MemoryScope, label: string, text: string): Promise<CoreEditResult> {
    requireUser(scope.userId);
    return this.guard("write to", () => this.core.append(scope, label, text));
  }

  async coreReplace(
    scope: MemoryScope,
    label: string,
    oldText: string,
    newText: string,
  ): Promise<CoreEditResult> {
    requireUser(scope.userId);
    return this.guard("write to", () => this.core.replace(scope, label, oldText, newText));
  }

  async setCoreBlock(
    scope: MemoryScope,
    label: string,
    value: string,
    options: { limit?: number } = {},
  ): Promise<CoreEditResult> {
    requireUser(scope.userId);
    return this.guard("write to", () => this.core.set(scope, label, value, options.limit));
  }

  async recallSearch(query: RecallQuery): Promise<RecallHit[]> {
    requireUser(query.userId);
    return this.guard("read", () => this.recall.search(query));
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

  private guard<T>(action: string, body: () => T): T {
    try {
      joinGroupCommit(this.db);
      return body();
    } catch (err) {
      throw storeError(err, this.file, action);
    }
  }
}
