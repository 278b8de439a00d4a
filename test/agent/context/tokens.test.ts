import { describe, expect, it } from "vitest";
import {
  estimateContextTokens,
  estimateMessageTokens,
  estimateTextTokens,
  TOKEN_COSTS,
  type TokenCounter,
  UsageCalibrator,
} from "../../../src/agent/context/index.js";
import type { Message, ToolSchema } from "../../../src/llm/types.js";

describe("estimateTextTokens", () => {
  it("counts CJK characters about one token each", () => {
    expect(estimateTextTokens("你好世界")).toBe(4);
    expect(estimateTextTokens("こんにちは")).toBe(5);
    expect(estimateTextTokens("カタカナ")).toBe(4);
    expect(estimateTextTokens("안녕하세요")).toBe(5);
    expect(estimateTextTokens("，。！？「」")).toBe(6);
    // Han extension B lives outside the BMP, as surrogate pairs.
    expect(estimateTextTokens("𠀀𠀁")).toBe(2);
  });

  it("counts other text about four characters a token", () => {
    expect(estimateTextTokens("")).toBe(0);
    expect(estimateTextTokens("a".repeat(400))).toBe(100);
    expect(estimateTextTokens("abcde")).toBe(2);
    expect(estimateTextTokens("café crème")).toBe(3);
    expect(estimateTextTokens("Привет мир!")).toBe(3);
  });

  it("adds CJK and other text in a mixed string", () => {
    // "hello " = 6 chars -> 2 tokens, plus 2 Han characters.
    expect(estimateTextTokens("hello 世界")).toBe(4);
    expect(estimateTextTokens("文件 src/index.ts 已更新")).toBe(5 + Math.ceil(14 / 4));
  });

  it("is far smaller for English than for the same number of CJK characters", () => {
    expect(estimateTextTokens("字".repeat(1000))).toBe(1000);
    expect(estimateTextTokens("w".repeat(1000))).toBe(250);
  });

  it("handles megabyte inputs and lone surrogates", () => {
    expect(estimateTextTokens("x".repeat(1 << 20))).toBe(1 << 18);
    expect(estimateTextTokens("中".repeat(1 << 20))).toBe(1 << 20);
    expect(estimateTextTokens("\ud800abc")).toBe(1);
    expect(estimateTextTokens("😀😀")).toBe(1);
  });
});

describe("estimateMessageTokens", () => {
  it("adds the per-message overhead to the content", () => {
    expect(estimateMessageTokens({ role: "user", content: "a".repeat(400) })).toBe(100 + TOKEN_COSTS.message);
    expect(estimateMessageTokens({ role: "system", content: "你好" })).toBe(2 + TOKEN_COSTS.message);
  });

  it("counts images at a fixed estimate", () => {
    const message: Message = {
      role: "user",
      content: [
        { type: "text", text: "abcd" },
        { type: "image", mimeType: "image/png", data: "A".repeat(100_000) },
      ],
    };
    expect(estimateMessageTokens(message)).toBe(TOKEN_COSTS.message + 1 + TOKEN_COSTS.image);
  });

  it("counts tool call names and arguments, reasoning and text", () => {
    const message: Message = {
      role: "assistant",
      content: [
        { type: "reasoning", text: "a".repeat(40) },
        { type: "text", text: "b".repeat(20) },
        { type: "tool_call", id: "c1", name: "read", arguments: '{"path":"a.txt"}' },
      ],
    };
    const expected = TOKEN_COSTS.message + 10 + 5 + TOKEN_COSTS.toolCall + 1 + 4;
    expect(estimateMessageTokens(message)).toBe(expected);
  });

  it("counts tool results with the tool name", () => {
    const message: Message = { role: "tool", toolCallId: "c1", toolName: "read", content: "z".repeat(80) };
    expect(estimateMessageTokens(message)).toBe(TOKEN_COSTS.message + 1 + 20);
  });

  it("uses a plugged-in counter", () => {
    const words: TokenCounter = {
      count: (text) => (text.trim() === "" ? 0 : text.trim().split(/\s+/).length),
    };
    expect(estimateMessageTokens({ role: "user", content: "one two three" }, words)).toBe(
      3 + TOKEN_COSTS.message,
    );
  });
});

describe("estimateContextTokens", () => {
  it("sums the system prompt, messages and tool schemas", () => {
    const tool: ToolSchema = {
      name: "read_file",
      description: "Reads a file",
      parameters: { type: "object", properties: { path: { type: "string" } } },
    };
    const messages: Message[] = [
      { role: "user", content: "hello there" },
      { role: "assistant", content: [{ type: "text", text: "hi" }] },
    ];
    const withoutTools = estimateContextTokens({ system: "You are helpful.", messages });
    expect(withoutTools).toBe(
      TOKEN_COSTS.message + 4 + estimateMessageTokens(messages[0]!) + estimateMessageTokens(messages[1]!),
    );
    const withTools = estimateContextTokens({ system: "You are helpful.", messages, tools: [tool] });
    const schemaTokens =
      TOKEN_COSTS.toolSchema +
      estimateTextTokens(tool.name) +
      estimateTextTokens(tool.description) +
      estimateTextTokens(JSON.stringify(tool.parameters));
    expect(withTools - withoutTools).toBe(schemaTokens);
    expect(estimateContextTokens({ messages: [] })).toBe(0);
  });
});

describe("UsageCalibrator", () => {
  it("leaves estimates unchanged until it has observed a call", () => {
    const calibrator = new UsageCalibrator();
    expect(calibrator.ratio).toBe(1);
    expect(calibrator.calibrate(1234)).toBe(1234);
  });

  it("adopts the first observed ratio and smooths later ones", () => {
    const calibrator = new UsageCalibrator({ smoothing: 0.5 });
    calibrator.observe(1000, 1200);
    expect(calibrator.ratio).toBeCloseTo(1.2);
    expect(calibrator.calibrate(1000)).toBe(1200);
    calibrator.observe(1000, 1600);
    expect(calibrator.ratio).toBeCloseTo(1.4);
    expect(calibrator.observed).toBe(2);
  });

  it("clamps the ratio to 0.5–2.0", () => {
    const high = new UsageCalibrator();
    high.observe(100, 10_000);
    expect(high.ratio).toBe(2);
    expect(high.calibrate(100)).toBe(200);
    const low = new UsageCalibrator();
    low.observe(10_000, 1);
    expect(low.ratio).toBe(0.5);
    for (let i = 0; i < 20; i++) low.observe(100, 1);
    expect(low.ratio).toBe(0.5);
  });

  it("ignores unusable observations", () => {
    const calibrator = new UsageCalibrator();
    calibrator.observe(0, 500);
    calibrator.observe(500, 0);
    calibrator.observe(Number.NaN, 500);
    calibrator.observe(500, Number.POSITIVE_INFINITY);
    expect(calibrator.ratio).toBe(1);
    expect(calibrator.observed).toBe(0);
  });

  it("rounds calibrated estimates up so compaction errs early", () => {
    const calibrator = new UsageCalibrator();
    calibrator.observe(3, 4);
    expect(calibrator.calibrate(10)).toBe(14);
  });
});
