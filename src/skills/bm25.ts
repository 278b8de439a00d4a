/**
 * A small in-memory BM25 index with weighted fields (in the spirit of BM25F): a term's frequency is
 * the weighted sum of its counts per field, so a word in a name counts more than one in a body.
 */
import { queryTokens, tokenize } from "./tokenize.js";

export interface Bm25Field {
  text: string;
  /** How much one occurrence in this field counts (1 = body text). */
  weight: number;
}

export interface Bm25Options {
  /** Term frequency saturation (default 1.2). */
  k1?: number;
  /** Length normalisation, 0..1 (default 0.75). */
  b?: number;
  tokenize?: (text: string) => string[];
  /** Tokens of a query (default: `queryTokens`, or `tokenize` when that is given). */
  tokenizeQuery?: (text: string) => string[];
  /**
   * Documents with no terms assumed to exist besides the real ones (default 0). Without them a word
   * found in every document of a tiny collection (two skills) would weigh almost nothing; with them,
   * small collections score like a slice of a bigger one, and large ones are barely affected.
   */
  priorDocs?: number;
}

export interface Bm25Hit<T> {
  item: T;
  score: number;
}

interface Doc<T> {
  item: T;
  length: number;
}

/** Documents added once, searched many times. */
export class Bm25Index<T> {
  readonly #docs: Doc<T>[] = [];
  /** term -> (document index -> weighted frequency) */
  readonly #postings = new Map<string, Map<number, number>>();
  readonly #k1: number;
  readonly #b: number;
  readonly #tokenize: (text: string) => string[];
  readonly #tokenizeQuery: (text: string) => string[];
  readonly #priorDocs: number;
  #totalLength = 0;

  constructor(options: Bm25Options = {}) {
    this.#k1 = options.k1 ?? 1.2;
    this.#b = options.b ?? 0.75;
    this.#tokenize = options.tokenize ?? tokenize;
    this.#tokenizeQuery = options.tokenizeQuery ?? options.tokenize ?? queryTokens;
    this.#priorDocs = options.priorDocs ?? 0;
  }

  get size(): number {
    return this.#docs.length;
  }

  /** Indexes one document made of weighted fields. */
  add(item: T, fields: readonly Bm25Field[]): void {
    const id = this.#docs.length;
    let length = 0;
    for (const field of fields) {
      for (const term of this.#tokenize(field.text)) {
        let posting = this.#postings.get(term);
        if (!posting) {
          posting = new Map();
          this.#postings.set(term, posting);
        }
        posting.set(id, (posting.get(id) ?? 0) + field.weight);
        length += field.weight;
      }
    }
    this.#docs.push({ item, length });
    this.#totalLength += length;
  }

  /** Documents sharing terms with `query`, best first; each query term counts once. */
  search(query: string, limit = Number.POSITIVE_INFINITY): Bm25Hit<T>[] {
    const n = this.#docs.length;
    if (n === 0) return [];
    const averageLength = this.#totalLength / n || 1;
    const scores = new Map<number, number>();
    for (const term of new Set(this.#tokenizeQuery(query))) {
      const posting = this.#postings.get(term);
      if (!posting) continue;
      const idf = Math.log(1 + (n + this.#priorDocs - posting.size + 0.5) / (posting.size + 0.5));
      for (const [id, tf] of posting) {
        const length = this.#docs[id]!.length;
        const norm = this.#k1 * (1 - this.#b + (this.#b * length) / averageLength);
        scores.set(id, (scores.get(id) ?? 0) + (idf * tf * (this.#k1 + 1)) / (tf + norm));
      }
    }
    return [...scores]
      .map(([id, score]) => ({ item: this.#docs[id]!.item, score }))
      .sort((a, b) => b.score - a.score)
      .slice(0, limit);
  }
}
