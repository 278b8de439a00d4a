/**
 * Bulk import of memories from JSON Lines, for `dimsum memory import FILE.jsonl` and
 * `POST /api/memory/import`: every line is checked first (nothing is written when one is wrong), then
 * the memories go in batches, each one embedding request (when an embedding model is set) and one
 * transaction, with progress after each batch.
 *
 * One memory per line: `{"text": "...", "type": "semantic", "tags": ["a"], "importance": 7,
 * "confidence": 0.9, "agentId": "a1", "userId": "u1"}`; only `text` is required (type defaults to
 * semantic). `userId` may be left out, then the importer's default user owns the memory.
 */
import { DimsumError } from "../errors.js";
import { cleanInput, MAX_MEMORY_CHARS } from "./input.js";
import { MEMORY_TYPES, type MemoryStore, type MemoryType, type RememberInput } from "./types.js";

/** Memories per batch: one embedding request and one transaction each. */
export const IMPORT_BATCH_SIZE = 500;

/** Most problems listed when lines are refused (the count says how many there are in all). */
const MAX_LISTED_PROBLEMS = 10;

export interface ImportProblem {
  /** 1-based line of the file, or the 0-based index in the API's list. */
  line: number;
  message: string;
}

export interface ImportProgress {
  done: number;
  total: number;
}

export interface ImportOptions {
  /** Owner of lines without `userId`. */
  userId?: string;
  /** Agent of lines without `agentId` (none: shared memories of the user). */
  agentId?: string;
  /**
   * Fold each line into a near-duplicate memory, as `memory add` does. Off by default: the duplicate
   * search costs a BM25 query per line (about 7 ms at 6,000 memories), the insert alone a fraction.
   */
  merge?: boolean;
  batchSize?: number;
  signal?: AbortSignal;
  onProgress?: (progress: ImportProgress) => void;
  /** Users a line may name; others are refused (the API passes the caller alone unless an admin). */
  allowUser?: (userId: string) => boolean;
}

export interface ImportResult {
  /** Lines stored as new memories. */
  added: number;
  /** Lines folded into an existing near-duplicate memory. */
  merged: number;
  /** Set when the embedding model failed and memories were stored without vectors. */
  warning?: string;
  ms: number;
}

const FIELDS = new Set(["text", "type", "tags", "importance", "confidence", "agentId", "userId"]);

/** One line's memory, or what is wrong with it. */
function parseLine(raw: string, options: ImportOptions): RememberInput | string {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    return `not JSON (${(err as Error).message})`;
  }
  return checkRecord(value, options);
}

/** One memory object (a parsed line, or an item of the API's list), or what is wrong with it. */
function checkRecord(value: unknown, options: ImportOptions): RememberInput | string {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return 'expected an object such as {"text": "..."}';
  }
  const fields = value as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((key) => !FIELDS.has(key));
  if (unknown.length > 0) return `unknown field ${unknown.join(", ")}; use ${[...FIELDS].join(", ")}`;
  const { text, type, tags, importance, confidence, agentId, userId } = fields;
  if (typeof text !== "string") return '"text" must be a string';
  if (type !== undefined && !MEMORY_TYPES.includes(type as MemoryType)) {
    return `"type" must be one of ${MEMORY_TYPES.join(", ")}`;
  }
  if (tags !== undefined && !(Array.isArray(tags) && tags.every((t) => typeof t === "string"))) {
    return '"tags" must be a list of strings';
  }
  const wholeOneToTen =
    Number.isInteger(importance) && (importance as number) >= 1 && (importance as number) <= 10;
  if (importance !== undefined && !wholeOneToTen) return '"importance" must be a whole number from 1 to 10';
  if (confidence !== undefined && !(typeof confidence === "number" && confidence >= 0 && confidence <= 1)) {
    return '"confidence" must be a number from 0 to 1';
  }
  for (const [name, id] of [
    ["userId", userId],
    ["agentId", agentId],
  ] as const) {
    if (id !== undefined && (typeof id !== "string" || id.trim() === ""))
      return `"${name}" must be a non-empty string`;
  }
  const owner = (userId as string | undefined) ?? options.userId;
  if (owner === undefined) return 'no user: add "userId" to the line or pass a default user';
  if (options.allowUser && !options.allowUser(owner)) return `you may not import memories of user ${owner}`;
  const agent = (agentId as string | undefined) ?? options.agentId;
  const input: RememberInput = { userId: owner, text, type: (type as MemoryType | undefined) ?? "semantic" };
  if (agent !== undefined) input.agentId = agent;
  if (tags !== undefined) input.tags = tags as string[];
  if (importance !== undefined) input.importance = importance as number;
  if (confidence !== undefined) input.confidence = confidence as number;
  try {
    cleanInput(input, MAX_MEMORY_CHARS);
  } catch (err) {
    return (err as Error).message;
  }
  return input;
}

/** Parses JSON Lines into memories; blank lines are skipped. Throws one error listing bad lines. */
export function parseMemoryLines(text: string, options: ImportOptions = {}): RememberInput[] {
  const inputs: RememberInput[] = [];
  const problems: ImportProblem[] = [];
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  lines.forEach((raw, i) => {
    if (raw.trim() === "") return;
    const parsed = parseLine(raw, options);
    if (typeof parsed === "string") problems.push({ line: i + 1, message: parsed });
    else inputs.push(parsed);
  });
  refuseProblems(problems, inputs.length, "lines", "line");
  return inputs;
}

/** The API's form: a list of the same objects as the lines of a file; problems name `memories[i]`. */
export function parseMemoryRecords(values: readonly unknown[], options: ImportOptions = {}): RememberInput[] {
  const inputs: RememberInput[] = [];
  const problems: ImportProblem[] = [];
  values.forEach((value, i) => {
    const checked = checkRecord(value, options);
    if (typeof checked === "string") problems.push({ line: i, message: checked });
    else inputs.push(checked);
  });
  refuseProblems(problems, inputs.length, "memories", "memories");
  return inputs;
}

/** Throws one error listing the first problems; nothing is written when any item is wrong. */
function refuseProblems(problems: ImportProblem[], good: number, noun: string, where: "line" | "memories") {
  const at = (p: ImportProblem) => (where === "line" ? `line ${p.line}` : `memories[${p.line}]`);
  if (problems.length > 0) {
    const listed = problems
      .slice(0, MAX_LISTED_PROBLEMS)
      .map((p) => `${at(p)}: ${p.message}`)
      .join("; ");
    const more =
      problems.length > MAX_LISTED_PROBLEMS ? ` (and ${problems.length - MAX_LISTED_PROBLEMS} more)` : "";
    throw new DimsumError(
      "invalid",
      `${problems.length} of ${problems.length + good} ${noun} cannot be imported, so none was: ${listed}${more}`,
      {
        hint: 'fix those; each memory is one JSON object like {"text": "...", "type": "semantic"}',
        issues: problems.slice(0, 100).map((p) => ({ path: at(p), message: p.message })),
      },
    );
  }
}

/** Stores parsed memories in batches; progress is reported after each batch. */
export async function importMemories(
  store: MemoryStore,
  inputs: readonly RememberInput[],
  options: ImportOptions = {},
): Promise<ImportResult> {
  const started = performance.now();
  const batchSize = Math.max(1, Math.floor(options.batchSize ?? IMPORT_BATCH_SIZE));
  const result: ImportResult = { added: 0, merged: 0, ms: 0 };
  for (let start = 0; start < inputs.length; start += batchSize) {
    if (options.signal?.aborted) break;
    const batch = inputs.slice(start, start + batchSize);
    const stored = await store.rememberMany(batch, {
      merge: options.merge ?? false,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    for (const one of stored) {
      if (one.merged) result.merged++;
      else result.added++;
      if (one.warning) result.warning = one.warning;
    }
    options.onProgress?.({ done: start + batch.length, total: inputs.length });
  }
  result.ms = performance.now() - started;
  return result;
}
