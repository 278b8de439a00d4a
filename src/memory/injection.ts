/**
 * What memory puts into a model call's context: the core blocks, and the archival memories most
 * relevant to the user's message within a character budget. The trace says how they were found.
 */
import type { MemoryStore, RetrievalMode } from "./types.js";

export interface MemoryLayersOptions {
  userId: string;
  agentId?: string;
  /** Usually the user's latest message. */
  query: string;
  /** Most memories injected (default 3). */
  limit?: number;
  /** Most characters of memory text injected (default 1,500). */
  charBudget?: number;
  /** Vector hits below this cosine are not injected (default 0.2); BM25 hits need shared words anyway. */
  minSimilarity?: number;
  signal?: AbortSignal;
}

export interface MemoryLayers {
  coreMemory: Array<{ label: string; value: string }>;
  memories: Array<{ id: string; type: string; text: string }>;
  trace: { mode: RetrievalMode; ids: string[]; scores: number[]; warning?: string };
}

/** Builds the `coreMemory` and `memories` context layers, and counts a use of each injected memory. */
export async function memoryLayers(memory: MemoryStore, options: MemoryLayersOptions): Promise<MemoryLayers> {
  const scope = options.agentId
    ? { userId: options.userId, agentId: options.agentId }
    : { userId: options.userId };
  const limit = Math.max(0, Math.floor(options.limit ?? 3));
  const budget = Math.max(0, Math.floor(options.charBudget ?? 1500));
  const blocks = await memory.coreBlocks(scope);
  const coreMemory = blocks
    .filter((b) => b.value.trim() !== "")
    .map((b) => ({ label: b.label, value: b.value }));
  const layers: MemoryLayers = {
    coreMemory,
    memories: [],
    trace: { mode: memory.status().mode, ids: [], scores: [] },
  };
  if (limit === 0 || budget === 0 || options.query.trim() === "") return layers;

  const result = await memory.search({
    ...scope,
    query: options.query,
    limit: limit * 3,
    minSimilarity: options.minSimilarity ?? 0.2,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  layers.trace.mode = result.mode;
  if (result.warning) layers.trace.warning = result.warning;
  let used = 0;
  for (const hit of result.hits) {
    if (layers.memories.length >= limit) break;
    let text = hit.memory.text;
    if (used + text.length > budget) {
      // A first memory longer than the whole budget is cut rather than leaving the section empty.
      if (layers.memories.length > 0) continue;
      text = `${text.slice(0, Math.max(0, budget - 1))}…`;
    }
    layers.memories.push({ id: hit.memory.id, type: hit.memory.type, text });
    layers.trace.ids.push(hit.memory.id);
    layers.trace.scores.push(hit.score);
    used += text.length;
  }
  if (layers.trace.ids.length > 0) await memory.touch(options.userId, layers.trace.ids);
  return layers;
}
