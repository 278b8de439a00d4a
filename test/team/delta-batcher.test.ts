/**
 * A run's deltas go out as at most one event per frame budget: the first at once (merged with the rest
 * of its read), later ones merged until the budget since the last event has passed; any other event
 * flushes first, so order is kept.
 */
import { expect, it } from "vitest";
import { DeltaBatcher } from "../../src/team/delta-batcher.js";

const turn = () => new Promise((r) => setImmediate(r));
const text = (t: string) => ({ type: "text_delta" as const, runId: "r1", text: t });

it("sends the first delta in the same turn and merges later ones within the frame budget", async () => {
  const out: string[] = [];
  const batcher = new DeltaBatcher((e) => out.push(`${e.type}:${e.text}`), 60_000);
  batcher.push(text("Hel"));
  batcher.push(text("lo"));
  await turn();
  expect(out).toEqual(["text_delta:Hello"]);
  batcher.push(text(" wor"));
  await turn();
  batcher.push(text("ld"));
  await turn();
  // Within the budget: held, merged.
  expect(out).toEqual(["text_delta:Hello"]);
  batcher.push({ type: "reasoning_delta", runId: "r1", text: "hmm" });
  // A delta of the other kind flushes the text first.
  expect(out).toEqual(["text_delta:Hello", "text_delta: world"]);
  batcher.flush();
  expect(out).toEqual(["text_delta:Hello", "text_delta: world", "reasoning_delta:hmm"]);
  batcher.flush();
  expect(out).toHaveLength(3);
});

it("with a budget of 0 merges only what arrives within one turn of the loop", async () => {
  const out: string[] = [];
  const batcher = new DeltaBatcher((e) => out.push(e.text), 0);
  batcher.push(text("a"));
  batcher.push(text("b"));
  await turn();
  batcher.push(text("c"));
  await turn();
  expect(out).toEqual(["ab", "c"]);
});
