/** Seeded random conversations and an independent oracle for the cut rules, shared by the property tests. */
import type { AssistantMessage, Message, ToolResultMessage } from "../../../src/llm/types.js";

/** mulberry32: a tiny deterministic PRNG so failures reproduce from the seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  "alpha",
  "beta",
  "gamma",
  "delta",
  "你好",
  "世界",
  "ファイル",
  "데이터",
  "path/to/file.ts",
  "{}",
];

function text(rand: () => number, maxWords: number): string {
  const n = 1 + Math.floor(rand() * maxWords);
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(WORDS[Math.floor(rand() * WORDS.length)] ?? "x");
  return out.join(" ");
}

/**
 * A random conversation: turns of a user message followed by rounds of assistant tool calls and their
 * results (sometimes shuffled, sometimes with a user message interleaved before the results arrive),
 * an optional leading assistant message, and occasional calls that never got results.
 */
export function randomConversation(rand: () => number): Message[] {
  const messages: Message[] = [];
  let nextId = 0;
  if (rand() < 0.1) messages.push({ role: "assistant", content: [{ type: "text", text: "Welcome back." }] });
  const turns = 1 + Math.floor(rand() * 8);
  for (let t = 0; t < turns; t++) {
    messages.push(
      rand() < 0.1
        ? {
            role: "user",
            content: [
              { type: "text", text: text(rand, 5) },
              { type: "image", mimeType: "image/png", data: "AAAA" },
            ],
          }
        : { role: "user", content: text(rand, 30) },
    );
    const rounds = Math.floor(rand() * 4);
    for (let r = 0; r < rounds; r++) {
      const calls = 1 + Math.floor(rand() * 3);
      const content: AssistantMessage["content"] = [];
      if (rand() < 0.3) content.push({ type: "reasoning", text: text(rand, 10) });
      if (rand() < 0.5) content.push({ type: "text", text: text(rand, 10) });
      const results: ToolResultMessage[] = [];
      for (let c = 0; c < calls; c++) {
        const id = `call_${nextId++}`;
        content.push({
          type: "tool_call",
          id,
          name: "read_file",
          arguments: JSON.stringify({ path: text(rand, 3) }),
        });
        if (rand() < 0.05) continue; // a call whose result never arrived (interrupted run)
        results.push({
          role: "tool",
          toolCallId: id,
          toolName: "read_file",
          content: text(rand, 200),
          isError: rand() < 0.1,
        });
      }
      messages.push({ role: "assistant", content });
      if (rand() < 0.3) results.reverse();
      const interjectAt = rand() < 0.15 ? Math.floor(rand() * (results.length + 1)) : -1;
      results.forEach((result, i) => {
        if (i === interjectAt) messages.push({ role: "user", content: "wait, also check the tests" });
        messages.push(result);
      });
    }
    if (rand() < 0.8) messages.push({ role: "assistant", content: [{ type: "text", text: text(rand, 20) }] });
  }
  return messages;
}

/** Where each tool call id was made, by message index. */
export function callIndexById(messages: readonly Message[]): Map<string, number> {
  const at = new Map<string, number>();
  messages.forEach((m, i) => {
    if (m.role === "assistant") for (const p of m.content) if (p.type === "tool_call") at.set(p.id, i);
  });
  return at;
}

/** Brute-force oracle: a cut at `i` is legal when the tail starts with a user message and no pair straddles it. */
export function isLegalCut(messages: readonly Message[], i: number): boolean {
  if (i <= 0 || i >= messages.length || messages[i]?.role !== "user") return false;
  const calls = callIndexById(messages);
  for (let j = i; j < messages.length; j++) {
    const m = messages[j];
    if (m?.role !== "tool") continue;
    const callAt = calls.get(m.toolCallId);
    if (callAt !== undefined && callAt < i) return false;
  }
  return true;
}

/** True when every tool pair lies wholly before the cut or wholly after it. */
export function pairsIntact(full: readonly Message[], cut: number): boolean {
  const calls = callIndexById(full);
  for (let j = 0; j < full.length; j++) {
    const m = full[j];
    if (m?.role !== "tool") continue;
    const callAt = calls.get(m.toolCallId);
    if (callAt === undefined) continue;
    if (callAt < cut !== j < cut) return false;
  }
  return true;
}
