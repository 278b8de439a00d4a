import { describe, expect, it } from "vitest";
import {
  estimateMessageTokens,
  truncateOldestFirst,
  truncateToolOutput,
} from "../../../src/agent/context/index.js";
import type { AssistantMessage, Message, ToolResultMessage } from "../../../src/llm/types.js";
import { isLegalCut, pairsIntact, randomConversation, seededRandom } from "./conversation-gen.js";

const tokens = (messages: readonly Message[]) =>
  messages.reduce((sum, m) => sum + estimateMessageTokens(m), 0);

describe("truncateToolOutput", () => {
  it("returns short text unchanged", () => {
    expect(truncateToolOutput("hello", 5)).toEqual({ text: "hello", cutChars: 0 });
  });

  it("keeps the head and the tail with a note, within the limit", () => {
    const text = `HEAD${"m".repeat(10_000)}TAIL`;
    const out = truncateToolOutput(text, 1000);
    expect(out.text.length).toBeLessThanOrEqual(1000);
    expect(out.text.startsWith("HEAD")).toBe(true);
    expect(out.text.endsWith("TAIL")).toBe(true);
    expect(out.text).toContain(`[… ${out.cutChars} characters cut …]`);
    const kept = out.text.replace(/\n\[… \d+ characters cut …\]\n/, "");
    expect(kept.length + out.cutChars).toBe(text.length);
  });

  it("never splits a surrogate pair", () => {
    const text = "😀".repeat(1000);
    for (const max of [101, 102, 103, 104, 555]) {
      const out = truncateToolOutput(text, max);
      expect(Buffer.from(out.text, "utf8").toString("utf8")).toBe(out.text);
      expect(out.text.length).toBeLessThanOrEqual(max);
    }
  });

  it("degrades to the bare note when the limit is smaller than the note", () => {
    const out = truncateToolOutput("x".repeat(500), 5);
    expect(out.cutChars).toBe(500);
    expect(out.text).toBe("\n[… 500 characters cut …]\n");
  });
});

describe("truncateOldestFirst", () => {
  const turn = (n: number, size: number): Message[] => [
    { role: "user", content: `q${n} ${"q".repeat(size)}` },
    { role: "assistant", content: [{ type: "tool_call", id: `t${n}`, name: "read", arguments: "{}" }] },
    { role: "tool", toolCallId: `t${n}`, toolName: "read", content: "r".repeat(size * 4) },
    { role: "assistant", content: [{ type: "text", text: `a${n}` }] },
  ];

  it("leaves a conversation that fits alone", () => {
    const messages = [...turn(1, 10), ...turn(2, 10)];
    const out = truncateOldestFirst(messages, 1_000_000);
    expect(out).toEqual({ messages, droppedCount: 0, truncatedCount: 0, fits: true, note: undefined });
  });

  it("drops whole turns oldest-first until it fits", () => {
    const messages = [...turn(1, 400), ...turn(2, 400), ...turn(3, 400)];
    const out = truncateOldestFirst(messages, tokens(turn(3, 400)) * 2 + 10);
    expect(out.droppedCount).toBe(4);
    expect(out.messages).toEqual([...turn(2, 400), ...turn(3, 400)]);
    expect(out.fits).toBe(true);
    expect(out.truncatedCount).toBe(0);
    expect(out.note).toContain("dropped the 4 oldest messages");
  });

  it("shortens the last turn's oldest tool results first instead of splitting it", () => {
    const last: Message[] = [
      { role: "user", content: "summarise the logs" },
      {
        role: "assistant",
        content: [{ type: "tool_call", id: "l1", name: "read", arguments: '{"f":"a.log"}' }],
      },
      { role: "tool", toolCallId: "l1", toolName: "read", content: `START${"x".repeat(40_000)}END` },
      {
        role: "assistant",
        content: [{ type: "tool_call", id: "l2", name: "read", arguments: '{"f":"b.log"}' }],
      },
      { role: "tool", toolCallId: "l2", toolName: "read", content: "y".repeat(8_000) },
    ];
    const messages = [...turn(1, 100), ...last];
    const budget = 3_000;
    const out = truncateOldestFirst(messages, budget);
    expect(out.droppedCount).toBe(4);
    expect(out.messages.map((m) => m.role)).toEqual(last.map((m) => m.role));
    expect(out.fits).toBe(true);
    expect(tokens(out.messages)).toBeLessThanOrEqual(budget);
    const first = out.messages[2] as ToolResultMessage;
    expect(first.toolCallId).toBe("l1");
    expect(first.content).toMatch(/^START/);
    expect(first.content).toMatch(/characters cut …\]\n/);
    // The newer result was not needed to reach the budget.
    expect(out.messages[4]).toBe(last[4]);
    expect(out.messages[1]).toBe(last[1]);
    expect(out.truncatedCount).toBe(1);
    expect(out.note).toContain("shortened 1 message of the last turn");
    expect(((messages[6] as ToolResultMessage).content as string).length).toBe(40_008);
  });

  it("reports when even the shortened last turn cannot fit", () => {
    const messages: Message[] = [
      { role: "user", content: "x".repeat(100_000) },
      { role: "assistant", content: [{ type: "text", text: "y".repeat(100_000), signature: "sig" }] },
    ];
    const out = truncateOldestFirst(messages, 10);
    expect(out.fits).toBe(false);
    expect(out.note).toMatch(/Still about \d+ tokens over/);
    // Signed text is left alone; the user text is shortened to its floor.
    expect(out.messages[1]).toBe(messages[1]);
    expect((out.messages[0]!.content as string).length).toBeLessThanOrEqual(200);
  });

  it("keeps structure on random conversations and budgets", () => {
    const rand = seededRandom(77);
    for (let round = 0; round < 1000; round++) {
      const messages = randomConversation(rand);
      const budget = Math.floor(rand() * tokens(messages) * 1.2);
      const out = truncateOldestFirst(messages, budget);
      const context = `round ${round}`;
      const kept = messages.slice(out.droppedCount);

      expect(out.messages.length, context).toBe(kept.length);
      if (out.droppedCount > 0) {
        expect(isLegalCut(messages, out.droppedCount), context).toBe(true);
        expect(out.messages[0]?.role, context).toBe("user");
      }
      expect(pairsIntact(messages, out.droppedCount), context).toBe(true);
      out.messages.forEach((m, i) => {
        const original = kept[i]!;
        expect(m.role, context).toBe(original.role);
        if (m.role === "tool") expect(m.toolCallId, context).toBe((original as ToolResultMessage).toolCallId);
        if (m.role === "assistant") {
          const callsOf = (a: AssistantMessage) => a.content.filter((p) => p.type !== "text");
          expect(callsOf(m), context).toEqual(callsOf(original as AssistantMessage));
        }
      });
      if (out.fits) expect(tokens(out.messages), context).toBeLessThanOrEqual(budget);
      if (out.truncatedCount === 0 && out.fits)
        out.messages.forEach((m, i) => {
          expect(m, context).toBe(kept[i]);
        });
      if (out.droppedCount === 0 && out.truncatedCount === 0 && out.fits)
        expect(out.note, context).toBeUndefined();
      else expect(out.note, context).toBeTypeOf("string");
    }
  });
});
