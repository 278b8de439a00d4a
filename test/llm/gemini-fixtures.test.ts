/** Replays every recorded Gemini stream and checks the README's expected outcome. */
import { describe, expect, it } from "vitest";
import { geminiAdapter } from "../../src/llm/gemini/index.js";
import type { ModelEvent, ModelSpec } from "../../src/llm/types.js";
import { listChunkFixtures, replayThroughParser, summarise } from "../support/fixtures.js";

const model: ModelSpec = {
  provider: "gemini",
  id: "gemini-2.5-flash",
  protocol: "gemini",
  baseUrl: "https://generativelanguage.googleapis.com",
  apiKey: "k",
  contextWindow: 1048576,
};

function replay(file: string) {
  const events = replayThroughParser(geminiAdapter, model, file);
  return { events, ...summarise(events) };
}

function expectSingleTerminal(events: ModelEvent[]): void {
  const terminals = events.filter((e) => e.type === "done" || e.type === "error");
  expect(terminals).toHaveLength(1);
  expect(events.at(-1)).toBe(terminals[0]);
}

const CALL_ID = /^call_\d+_[0-9a-f]+$/;

const checks: Record<string, () => void> = {
  "google--google-text.chunks.txt": () => {
    const r = replay("google--google-text.chunks.txt");
    expectSingleTerminal(r.events);
    const text = 'There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y';
    expect(r.text).toBe(text);
    expect(r.reasoning).toBe("");
    expect(r.toolCalls).toEqual([]);
    expect(r.done?.finishReason).toBe("stop");
    expect(r.done?.rawFinishReason).toBe("STOP");
    expect(r.usage).toEqual({ inputTokens: 9, outputTokens: 23, totalTokens: 217, reasoningTokens: 185 });
    expect(r.done?.usage).toEqual(r.usage);
    expect(r.done?.responseId).toBe("bH6LaZW8Fp_3nsEPqtaSwQ4");
    expect(r.done?.model).toBe("gemini-3-pro-preview");
    // The signature of the empty final part stays on the message's text part, to be echoed back.
    const content = r.done?.message.content ?? [];
    expect(content).toHaveLength(1);
    expect(content[0]).toMatchObject({ type: "text", text });
    expect(content[0]?.type === "text" && content[0].signature?.startsWith("EqsFCqgFAb4+9vvt")).toBe(true);
  },
  "google--google-reasoning.chunks.txt": () => {
    const r = replay("google--google-reasoning.chunks.txt");
    expectSingleTerminal(r.events);
    expect(r.text).toBe('There are **3** "r"s in strawberry.\n\nHere is the breakdown: st**r**awbe**rr**y.');
    expect(r.reasoning).toBe("");
    expect(r.done?.finishReason).toBe("stop");
    expect(r.usage).toEqual({ inputTokens: 9, outputTokens: 29, totalTokens: 294, reasoningTokens: 256 });
    const part = r.done?.message.content[0];
    expect(part?.type === "text" && part.signature?.startsWith("Eo0HCooHAb4+9vut")).toBe(true);
  },
  "google--google-tool-call.chunks.txt": () => {
    const r = replay("google--google-tool-call.chunks.txt");
    expectSingleTerminal(r.events);
    expect(r.text).toBe("");
    expect(r.toolCalls).toHaveLength(1);
    const call = r.toolCalls[0];
    expect(call?.name).toBe("weather");
    expect(call?.id).toMatch(CALL_ID);
    expect(JSON.parse(call?.arguments ?? "")).toEqual({ location: "San Francisco" });
    expect(call?.signature?.startsWith("EqUCCqICAb4+9vsh")).toBe(true);
    expect(r.done?.finishReason).toBe("tool_calls");
    expect(r.done?.rawFinishReason).toBe("STOP");
    expect(r.usage).toEqual({ inputTokens: 29, outputTokens: 15, totalTokens: 89, reasoningTokens: 45 });
    expect(r.done?.message.content).toEqual([{ type: "tool_call", ...call }]);
  },
  "google--google-stream-tool-call-arguments.chunks.txt": () => {
    const r = replay("google--google-stream-tool-call-arguments.chunks.txt");
    expectSingleTerminal(r.events);
    expect(r.text).toBe("");
    expect(r.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
      ["getWeather", { location: "Boston" }],
      ["getWeather", { location: "San Francisco" }],
    ]);
    const [first, second] = r.toolCalls;
    expect(first?.id).toMatch(CALL_ID);
    expect(second?.id).toMatch(CALL_ID);
    expect(first?.id).not.toBe(second?.id);
    expect(first?.signature?.startsWith("CiMBjz1rX25K")).toBe(true);
    expect(second?.signature).toBeUndefined();
    expect(r.done?.finishReason).toBe("tool_calls");
    expect(r.usage).toEqual({ inputTokens: 26, outputTokens: 23, totalTokens: 181, reasoningTokens: 132 });
    expect(r.done?.responseId).toBe("dqHOab6xGLzWodAPkPuViA4");
  },
};

describe("Gemini recorded streams", () => {
  it("has an expectation for every google-- stream fixture", () => {
    const files = listChunkFixtures().filter((f) => f.startsWith("google--"));
    expect(files.sort()).toEqual(Object.keys(checks).sort());
  });

  for (const [file, check] of Object.entries(checks)) it(file, check);

  it("emits each tool call as soon as it closes, before the stream ends", () => {
    const r = replay("google--google-stream-tool-call-arguments.chunks.txt");
    const kinds = r.events.map((e) => e.type);
    expect(kinds).toEqual(["tool_call", "tool_call", "usage", "done"]);
  });
});
