/** Loads the recorded provider streams in ../shared/fixtures/provider-streams and replays them. */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { ProtocolAdapter, SseEvent } from "../../src/llm/adapter.js";
import type { ModelEvent, ModelSpec } from "../../src/llm/types.js";

const here = dirname(fileURLToPath(import.meta.url));
export const projectRoot = resolve(here, "../..");
/**
 * The team's shared data (recorded provider streams, datasets) lives beside the project as
 * `../shared`; `DIMSUM_SHARED_DIR` points elsewhere when a checkout sits somewhere else.
 */
export const sharedDir = findSharedDir();
export const fixturesDir = join(sharedDir, "fixtures/provider-streams");
export const datasetsDir = join(sharedDir, "datasets");

/** Every `*.chunks.txt` file name in the fixtures folder. */
export function listChunkFixtures(): string[] {
  return readdirSync(fixturesDir)
    .filter((f) => f.endsWith(".chunks.txt"))
    .sort();
}

/** The SSE data payloads of one fixture, one per line, empty lines skipped, whitespace untouched. */
export function loadChunks(file: string): string[] {
  return readFileSync(join(fixturesDir, file), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "");
}

/** The SSE events a provider would have sent for a fixture, per the fixtures README. */
export function sseEventsFor(file: string): SseEvent[] {
  const lines = loadChunks(file);
  if (file.startsWith("anthropic--")) {
    return lines.map((data) => ({ event: (JSON.parse(data) as { type: string }).type, data }));
  }
  const events: SseEvent[] = lines.map((data) => ({ data }));
  if (!file.startsWith("google--")) events.push({ data: "[DONE]" });
  return events;
}

/** The raw SSE body text for a fixture, as a server would send it. */
export function sseBodyFor(file: string): string {
  return sseEventsFor(file)
    .map((e) => `${e.event ? `event: ${e.event}\n` : ""}data: ${e.data}\n\n`)
    .join("");
}

/** Runs a fixture through an adapter's parser and returns every event, ending with `done`/`error`. */
export function replayThroughParser(adapter: ProtocolAdapter, model: ModelSpec, file: string): ModelEvent[] {
  const parser = adapter.createParser(model);
  const out: ModelEvent[] = [];
  for (const event of sseEventsFor(file)) out.push(...parser.push(event));
  out.push(...parser.finish());
  return out;
}

/** Folds replayed events into the totals a fixture README states. */
export function summarise(events: ModelEvent[]) {
  let text = "";
  let reasoning = "";
  const toolCalls: Extract<ModelEvent, { type: "tool_call" }>["call"][] = [];
  let usage: Extract<ModelEvent, { type: "usage" }>["usage"] | undefined;
  let done: Extract<ModelEvent, { type: "done" }> | undefined;
  let error: Extract<ModelEvent, { type: "error" }> | undefined;
  for (const e of events) {
    if (e.type === "text_delta") text += e.text;
    else if (e.type === "reasoning_delta") reasoning += e.text;
    else if (e.type === "tool_call") toolCalls.push(e.call);
    else if (e.type === "usage") usage = e.usage;
    else if (e.type === "done") done = e;
    else if (e.type === "error") error = e;
  }
  return { text, reasoning, toolCalls, usage, done, error };
}

function findSharedDir(): string {
  const candidates = [process.env.DIMSUM_SHARED_DIR, resolve(projectRoot, "../shared"), "/work/shared"];
  for (const dir of candidates) if (dir && existsSync(join(dir, "fixtures"))) return dir;
  throw new Error(
    `The shared fixtures folder was not found (looked in ${candidates.filter(Boolean).join(", ")}); set DIMSUM_SHARED_DIR to the folder holding fixtures/ and datasets/`,
  );
}
