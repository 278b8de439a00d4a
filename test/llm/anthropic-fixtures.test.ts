/** Replays every recorded Anthropic stream (and response body) and checks the README's expected outcome. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { anthropicAdapter, parseMessagesResponse } from "../../src/llm/anthropic/index.js";
import type { ModelEvent, ModelSpec } from "../../src/llm/types.js";
import { fixturesDir, listChunkFixtures, replayThroughParser, summarise } from "../support/fixtures.js";

const model: ModelSpec = {
  provider: "anthropic",
  id: "claude-sonnet-4-5",
  protocol: "anthropic",
  baseUrl: "https://api.anthropic.com",
  apiKey: "k",
  contextWindow: 200000,
};

const GCD_TEXT =
  "# Finding GCD(1071, 462) Using the Euclidean Algorithm\n\n## Step 1: Divide 1071 by 462\n$$1071 = 2 \\times 462 + 147$$\n(since 2 × 462 = 924, and 1071 − 924 = 147)\n\n## Step 2: Divide 462 by 147\n$$462 = 3 \\times 147 + 21$$\n(since 3 × 147 = 441, and 462 − 441 = 21)\n\n## Step 3: Divide 147 by 21\n$$147 = 7 \\times 21 + 0$$\n(since 7 × 21 = 147, remainder is 0)\n\n## Conclusion\nSince the remainder is now 0, the algorithm stops. The last non-zero remainder is **21**.\n\n$$\\gcd(1071, 462) = 21$$\n\n**Verification:** \n- 1071 = 21 × 51 ✓\n- 462 = 21 × 22 ✓";
const GCD_REASONING =
  "I'm working through the Euclidean algorithm to find the GCD of 1071 and 462, applying successive division until I reach a remainder of zero, which gives me 21 as the greatest common divisor.";
const WEBSITE_INPUT = {
  website_path: "/home/user/pace-landing",
  tasks: [
    {
      description:
        'Today you post every run to Strava, but Strava does not answer the question: "What should I do next after this run?". It is a great log, but it is not adaptive.',
      type: "feature",
      passes: false,
    },
  ],
};

function replay(file: string) {
  const events = replayThroughParser(anthropicAdapter, model, file);
  return { events, ...summarise(events) };
}

/** Exactly one terminal event, and it is the last one. */
function expectSingleTerminal(events: ModelEvent[]): void {
  const terminals = events.filter((e) => e.type === "done" || e.type === "error");
  expect(terminals).toHaveLength(1);
  expect(events.at(-1)).toBe(terminals[0]);
}

const checks: Record<string, () => void> = {
  "anthropic--anthropic-text.chunks.txt": () => {
    const r = replay("anthropic--anthropic-text.chunks.txt");
    expectSingleTerminal(r.events);
    expect(r.text).toBe(
      "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?",
    );
    expect(r.reasoning).toBe("");
    expect(r.toolCalls).toEqual([]);
    expect(r.done?.finishReason).toBe("stop");
    expect(r.done?.rawFinishReason).toBe("end_turn");
    expect(r.usage).toEqual({ inputTokens: 12, outputTokens: 30, totalTokens: 42, cachedInputTokens: 0 });
    expect(r.done?.usage).toEqual(r.usage);
    expect(r.done?.responseId).toBe("msg_01QC4g3HwBThD4BaNtBckFDJ");
    expect(r.done?.model).toBe("claude-sonnet-4-5-20250929");
    expect(r.done?.message).toEqual({ role: "assistant", content: [{ type: "text", text: r.text }] });
  },
  "anthropic--anthropic-tool-no-args.chunks.txt": () => {
    const r = replay("anthropic--anthropic-tool-no-args.chunks.txt");
    expectSingleTerminal(r.events);
    expect(r.text).toBe("I'll update the issue list for you.");
    expect(r.toolCalls).toEqual([
      { id: "toolu_01QE1WLsSVp5hy5Q3GmGTmjP", name: "updateIssueList", arguments: "{}" },
    ]);
    expect(JSON.parse(r.toolCalls[0]?.arguments ?? "")).toEqual({});
    expect(r.done?.finishReason).toBe("tool_calls");
    expect(r.usage).toMatchObject({ inputTokens: 565, outputTokens: 48, totalTokens: 613 });
    expect(r.done?.message.content).toEqual([
      { type: "text", text: "I'll update the issue list for you." },
      { type: "tool_call", id: "toolu_01QE1WLsSVp5hy5Q3GmGTmjP", name: "updateIssueList", arguments: "{}" },
    ]);
  },
  "anthropic--anthropic-issue-11719-quoted-tool-input.chunks.txt": () => {
    const r = replay("anthropic--anthropic-issue-11719-quoted-tool-input.chunks.txt");
    expectSingleTerminal(r.events);
    expect(r.text).toBe("");
    expect(r.toolCalls).toHaveLength(1);
    expect(r.toolCalls[0]).toMatchObject({ id: "toolu_01Cr31vcGoeeRgi3Eo5Ds8qN", name: "website_update" });
    expect(r.toolCalls[0]?.arguments).toBe(
      '{"website_path": "/home/user/pace-landing", "tasks": [{"description": "Today you post every run to Strava, but Strava does not answer the question: \\"What should I do next after this run?\\". It is a great log, but it is not adaptive.", "type": "feature", "passes": false}]}',
    );
    expect(JSON.parse(r.toolCalls[0]?.arguments ?? "")).toEqual(WEBSITE_INPUT);
    expect(r.done?.finishReason).toBe("tool_calls");
    expect(r.done?.stopDetails).toBeUndefined();
    expect(r.usage).toMatchObject({ inputTokens: 912, outputTokens: 118, totalTokens: 1030 });
  },
  "anthropic--anthropic-claude-sonnet-5-reasoning-summarized.chunks.txt": () => {
    const r = replay("anthropic--anthropic-claude-sonnet-5-reasoning-summarized.chunks.txt");
    expectSingleTerminal(r.events);
    expect(r.reasoning).toBe(GCD_REASONING);
    expect(r.text).toBe(GCD_TEXT);
    expect(r.done?.finishReason).toBe("stop");
    expect(r.usage).toEqual({
      inputTokens: 47,
      outputTokens: 373,
      totalTokens: 420,
      reasoningTokens: 62,
      cachedInputTokens: 0,
    });
    const [thinking, text, ...rest] = r.done?.message.content ?? [];
    expect(rest).toEqual([]);
    expect(text).toEqual({ type: "text", text: GCD_TEXT });
    expect(thinking?.type).toBe("reasoning");
    if (thinking?.type !== "reasoning") return;
    expect(thinking.text).toBe(GCD_REASONING);
    expect(thinking.signature).toHaveLength(436);
    expect(thinking.signature?.startsWith("EsECCokBCBAY")).toBe(true);
  },
  "anthropic--anthropic-refusal.chunks.txt": () => {
    const r = replay("anthropic--anthropic-refusal.chunks.txt");
    expectSingleTerminal(r.events);
    expect(r.text).toBe("");
    expect(r.reasoning).toBe("");
    expect(r.toolCalls).toEqual([]);
    expect(r.done?.finishReason).toBe("refusal");
    expect(r.done?.rawFinishReason).toBe("refusal");
    expect(r.done?.stopDetails).toEqual({
      type: "refusal",
      category: "cyber",
      explanation:
        "This request triggered restrictions on violative cyber content and was blocked under Anthropic's Usage Policy.",
      recommended_model: "claude-fable-5",
    });
    expect(r.done?.message).toEqual({ role: "assistant", content: [] });
    expect(r.usage).toMatchObject({ inputTokens: 18, outputTokens: 5, totalTokens: 23 });
  },
  "anthropic--issue-18331-duplicate-message-start.chunks.txt": () => {
    const r = replay("anthropic--issue-18331-duplicate-message-start.chunks.txt");
    expectSingleTerminal(r.events);
    expect(r.done?.responseId).toBe("msg_duplicate");
    expect(r.text).toBe("ok");
    expect(r.done?.finishReason).toBe("stop");
    expect(r.usage).toEqual({ inputTokens: 10, outputTokens: 2, totalTokens: 12 });
    expect(r.events.filter((e) => e.type === "usage")).toHaveLength(1);
  },
};

describe("Anthropic recorded streams", () => {
  it("has an expectation for every anthropic-- stream fixture", () => {
    const files = listChunkFixtures().filter((f) => f.startsWith("anthropic--"));
    expect(files.sort()).toEqual(Object.keys(checks).sort());
  });

  for (const [file, check] of Object.entries(checks)) it(file, check);
});

describe("parseMessagesResponse (non-streaming bodies)", () => {
  const body = (file: string) => readFileSync(join(fixturesDir, file), "utf8");

  it("anthropic--anthropic-text.json: text Hello!, end_turn, usage 10/5", () => {
    const events = parseMessagesResponse(body("anthropic--anthropic-text.json"));
    const r = summarise(events);
    expectSingleTerminal(events);
    expect(r.text).toBe("Hello!");
    expect(r.done?.finishReason).toBe("stop");
    expect(r.done?.rawFinishReason).toBe("end_turn");
    expect(r.done?.responseId).toBe("msg_01TestTextResponse");
    expect(r.done?.model).toBe("claude-opus-4-7");
    expect(r.usage).toEqual({ inputTokens: 10, outputTokens: 5, totalTokens: 15, cachedInputTokens: 0 });
    expect(r.done?.message).toEqual({ role: "assistant", content: [{ type: "text", text: "Hello!" }] });
  });

  it("anthropic--anthropic-issue-11719-quoted-tool-input.json: one tool_use with the quoted description", () => {
    const r = summarise(
      parseMessagesResponse(JSON.parse(body("anthropic--anthropic-issue-11719-quoted-tool-input.json"))),
    );
    expect(r.toolCalls).toHaveLength(1);
    expect(r.toolCalls[0]).toMatchObject({ id: "toolu_01JKBd25gEfr9ZpVvn8quK2v", name: "website_update" });
    expect(JSON.parse(r.toolCalls[0]?.arguments ?? "")).toEqual(WEBSITE_INPUT);
    expect(r.done?.finishReason).toBe("tool_calls");
    expect(r.usage).toMatchObject({ inputTokens: 912, outputTokens: 118, totalTokens: 1030 });
  });

  it("keeps thinking with its signature and redacted thinking from a body", () => {
    const r = summarise(
      parseMessagesResponse({
        id: "msg_1",
        content: [
          { type: "thinking", thinking: "hmm", signature: "sig-1" },
          { type: "redacted_thinking", data: "opaque" },
          { type: "text", text: "answer" },
        ],
        stop_reason: "max_tokens",
        usage: { input_tokens: 3, output_tokens: 4 },
      }),
    );
    expect(r.reasoning).toBe("hmm");
    expect(r.done?.finishReason).toBe("length");
    expect(r.done?.message.content).toEqual([
      { type: "reasoning", text: "hmm", signature: "sig-1" },
      { type: "reasoning", text: "", redactedData: "opaque" },
      { type: "text", text: "answer" },
    ]);
  });

  it("turns an error body into an error event", () => {
    const events = parseMessagesResponse(
      '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    );
    expect(events).toHaveLength(1);
    const event = events[0];
    expect(event?.type === "error" && event.error.code).toBe("provider_unavailable");
  });

  it("reports a body that is not JSON", () => {
    const [event] = parseMessagesResponse("<html>bad gateway</html>");
    expect(event?.type === "error" && event.error.message).toContain("not JSON");
  });
});
