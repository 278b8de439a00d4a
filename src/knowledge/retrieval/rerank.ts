/**
 * Stage 3 of retrieval: the model scores the top passages. It is asked for a JSON object of 0..10
 * scores under short ids (P1, P2, ...) so long chunk ids cannot be mistyped. Models wrap JSON in
 * prose and fences, so parsing is lenient; a reply with no usable score is a failure, and the caller
 * then keeps the fused order.
 */
import { DimsumError } from "../../errors.js";
import type { ModelSpec, StreamFunction } from "../../llm/types.js";
import type { Reranker } from "../types.js";

export interface ModelRerankerOptions {
  stream: StreamFunction;
  model: ModelSpec;
  /** Characters of each passage shown to the model (default 1,200). */
  maxPassageChars?: number;
}

const SYSTEM = `You rank search results. For the query, rate how well each passage answers it, from 0 (unrelated)
to 10 (answers it fully). Answer with only JSON, no prose: {"scores": [{"id": "P1", "score": 7}, ...]}
with one entry for every passage.`;

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Candidate JSON texts in a reply: a fenced block, the whole reply, the outermost {...} and [...]. */
function jsonCandidates(reply: string): string[] {
  const out: string[] = [];
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(reply);
  if (fenced?.[1]) out.push(fenced[1].trim());
  out.push(reply.trim());
  for (const [open, close] of [
    ["{", "}"],
    ["[", "]"],
  ] as const) {
    const start = reply.indexOf(open);
    const end = reply.lastIndexOf(close);
    if (start >= 0 && end > start) out.push(reply.slice(start, end + 1));
  }
  return out;
}

function toScore(value: unknown): number | undefined {
  const n = typeof value === "string" ? Number(value) : value;
  return typeof n === "number" && Number.isFinite(n) ? Math.min(10, Math.max(0, n)) : undefined;
}

/** Pairs of (id, score) from the shapes models produce: {scores:[...]}, [...], or {"P1": 7}. */
function scorePairs(value: unknown): Array<[string, number]> {
  const list = Array.isArray(value)
    ? value
    : value && typeof value === "object" && Array.isArray((value as { scores?: unknown }).scores)
      ? (value as { scores: unknown[] }).scores
      : undefined;
  const pairs: Array<[string, number]> = [];
  if (list) {
    for (const item of list) {
      if (!item || typeof item !== "object") continue;
      const fields = item as Record<string, unknown>;
      const score = toScore(fields.score ?? fields.relevance);
      if (fields.id !== undefined && score !== undefined) pairs.push([String(fields.id), score]);
    }
  } else if (value && typeof value === "object") {
    for (const [id, raw] of Object.entries(value)) {
      const score = toScore(raw);
      if (score !== undefined) pairs.push([id, score]);
    }
  }
  return pairs;
}

/** Scores by passage id from a reply; throws DimsumError when nothing in it scores a known passage. */
export function parseRerankReply(reply: string, ids: readonly string[]): Map<string, number> {
  const byShort = new Map(ids.map((id, i) => [`p${i + 1}`, id]));
  for (const candidate of jsonCandidates(reply)) {
    let value: unknown;
    try {
      value = JSON.parse(candidate);
    } catch {
      continue;
    }
    const scores = new Map<string, number>();
    for (const [rawId, score] of scorePairs(value)) {
      const key = rawId.replace(/[[\]\s]/g, "").toLowerCase();
      const id = byShort.get(key) ?? byShort.get(`p${key}`);
      if (id !== undefined && !scores.has(id)) scores.set(id, score);
    }
    if (scores.size > 0) return scores;
  }
  throw new DimsumError(
    "tool_failed",
    `the reranking reply holds no scores for the passages: ${clip(reply, 160) || "(empty reply)"}`,
  );
}

/** A Reranker that asks a chat model for scores. Errors, bad JSON and aborts reject. */
export function createModelReranker(options: ModelRerankerOptions): Reranker {
  const maxChars = options.maxPassageChars ?? 1200;
  return {
    name: `${options.model.provider}:${options.model.id}`,
    async rerank(query, passages, signal) {
      const ids = passages.map((p) => p.id);
      const prompt = [
        `Query: ${query}`,
        "Passages:",
        ...passages.map((p, i) => `[P${i + 1}] ${clip(p.text, maxChars)}`),
        "Return the JSON scores now.",
      ].join("\n\n");
      let reply = "";
      for await (const event of options.stream(
        options.model,
        { system: SYSTEM, messages: [{ role: "user", content: prompt }] },
        { temperature: 0, toolChoice: "none", ...(signal ? { signal } : {}) },
      )) {
        if (event.type === "text_delta") reply += event.text;
        else if (event.type === "error") throw event.error;
      }
      return parseRerankReply(reply, ids);
    },
  };
}

/** Runs `work` with a deadline: rejects with DimsumError('timeout') after `ms`, aborting the signal it gave `work`. */
export async function withDeadline<T>(
  work: (signal: AbortSignal) => Promise<T>,
  ms: number,
  outer?: AbortSignal,
): Promise<T> {
  const controller = new AbortController();
  let rejectAborted: (err: DimsumError) => void = () => {};
  const aborted = new Promise<never>((_, reject) => {
    rejectAborted = reject;
  });
  const onAbort = () => {
    controller.abort(outer?.reason);
    rejectAborted(new DimsumError("aborted", "The search was cancelled."));
  };
  if (outer?.aborted) onAbort();
  else outer?.addEventListener("abort", onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  // Raced rather than trusted to the signal: a reranker that ignores its signal still cannot stall search.
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new DimsumError("timeout", `no answer within ${ms} ms`));
    }, ms);
  });
  const running = Promise.resolve().then(() => work(controller.signal));
  try {
    return await Promise.race([running, deadline, aborted]);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener("abort", onAbort);
    // The loser of the race may still reject later; nobody awaits it, so it must not go unhandled.
    running.catch(() => {});
    deadline.catch(() => {});
    aborted.catch(() => {});
  }
}
