import { describe, expect, it } from "vitest";
import {
  estimateMessageTokens,
  legalCutPoints,
  planCompaction,
  pruneToolResults,
  shouldCompact,
} from "../../../src/agent/context/index.js";
import { DimsumError } from "../../../src/errors.js";
import type { Message, ToolResultMessage } from "../../../src/llm/types.js";
import {
  callIndexById,
  isLegalCut,
  pairsIntact,
  randomConversation,
  seededRandom,
} from "./conversation-gen.js";

const user = (text: string): Message => ({ role: "user", content: text });
const answer = (text: string): Message => ({ role: "assistant", content: [{ type: "text", text }] });
const call = (...ids: string[]): Message => ({
  role: "assistant",
  content: ids.map((id) => ({
    type: "tool_call" as const,
    id,
    name: "shell",
    arguments: `{"cmd":"ls ${id}"}`,
  })),
});
const result = (id: string, text: string): ToolResultMessage => ({
  role: "tool",
  toolCallId: id,
  toolName: "shell",
  content: text,
});
const tokens = (messages: readonly Message[]) =>
  messages.reduce((sum, m) => sum + estimateMessageTokens(m), 0);

describe("shouldCompact", () => {
  it("triggers past the threshold share of the window", () => {
    expect(shouldCompact({ estimatedTokens: 76_000, contextWindow: 100_000 })).toBe(true);
    expect(shouldCompact({ estimatedTokens: 75_000, contextWindow: 100_000 })).toBe(false);
    expect(shouldCompact({ estimatedTokens: 60_000, contextWindow: 100_000, threshold: 0.5 })).toBe(true);
  });

  it("triggers when the output reserve would not fit", () => {
    expect(shouldCompact({ estimatedTokens: 71_000, contextWindow: 100_000, reserveOutput: 30_000 })).toBe(
      true,
    );
    expect(shouldCompact({ estimatedTokens: 69_000, contextWindow: 100_000, reserveOutput: 30_000 })).toBe(
      false,
    );
  });

  it("rejects a nonsensical window or threshold with a config error", () => {
    expect(() => shouldCompact({ estimatedTokens: 1, contextWindow: 0 })).toThrow(DimsumError);
    try {
      shouldCompact({ estimatedTokens: 1, contextWindow: 1000, threshold: 75 });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(DimsumError);
      expect((err as DimsumError).code).toBe("config");
      expect((err as DimsumError).message).toContain("75");
    }
  });
});

describe("planCompaction", () => {
  const turn = (n: number): Message[] => [
    user(`question ${n} ${"q".repeat(200)}`),
    call(`c${n}a`, `c${n}b`),
    result(`c${n}a`, "r".repeat(400)),
    result(`c${n}b`, "s".repeat(400)),
    answer(`answer ${n} ${"a".repeat(200)}`),
  ];
  const conversation = [...turn(1), ...turn(2), ...turn(3), ...turn(4)];
  const turnTokens = tokens(turn(4));

  it("keeps the most recent whole turns that fit the keep budget", () => {
    const plan = planCompaction(conversation, {
      keepRecentTokens: turnTokens * 2 + 5,
      targetTokens: 1_000_000,
    });
    expect(plan.cutIndex).toBe(10);
    expect(plan.keep).toEqual([...turn(3), ...turn(4)]);
    expect(plan.summarize).toEqual([...turn(1), ...turn(2)]);
    expect(plan.keepTokens).toBe(tokens(plan.keep));
    expect(plan.summarizeTokens).toBe(tokens(plan.summarize));
    expect(plan.withinTarget).toBe(true);
  });

  it("keeps at least the last turn, even over budget (what /compact asks for with 0)", () => {
    const plan = planCompaction(conversation, { keepRecentTokens: 0, targetTokens: 10 });
    expect(plan.keep).toEqual(turn(4));
    expect(plan.withinTarget).toBe(false);
  });

  it("uses the smaller of the keep budget and the target", () => {
    const plan = planCompaction(conversation, { keepRecentTokens: 1_000_000, targetTokens: turnTokens + 1 });
    expect(plan.keep).toEqual(turn(4));
    expect(plan.withinTarget).toBe(true);
  });

  it("summarises nothing when everything fits or there is only one turn", () => {
    expect(
      planCompaction(conversation, { keepRecentTokens: 1_000_000, targetTokens: 1_000_000 }).summarize,
    ).toEqual([]);
    const single = planCompaction(turn(1), { keepRecentTokens: 0, targetTokens: 0 });
    expect(single.summarize).toEqual([]);
    expect(single.keep).toEqual(turn(1));
    expect(single.cutIndex).toBe(0);
  });

  it("does not cut before a user message that arrived between a tool call and its result", () => {
    const messages = [
      user("first"),
      answer("ok"),
      user("run it"),
      call("x1"),
      user("also: hurry"),
      result("x1", "done"),
      answer("finished"),
    ];
    expect(legalCutPoints(messages)).toEqual([2]);
    const plan = planCompaction(messages, { keepRecentTokens: 0, targetTokens: 0 });
    expect(plan.cutIndex).toBe(2);
    expect(plan.keep[0]).toEqual(user("run it"));
  });

  it("pairs reused tool call ids with the most recent call", () => {
    // Some servers number calls per response, so "call_0" appears in every turn.
    const messages = [
      user("a"),
      call("call_0"),
      result("call_0", "1"),
      user("b"),
      call("call_0"),
      result("call_0", "2"),
    ];
    expect(legalCutPoints(messages)).toEqual([3]);
  });

  it("keeps every invariant on thousands of random conversations and budgets", () => {
    const rand = seededRandom(20240611);
    let cutsMade = 0;
    for (let round = 0; round < 2000; round++) {
      const messages = randomConversation(rand);
      const total = tokens(messages);
      const keepRecentTokens = Math.floor(rand() * total * 1.1);
      const targetTokens = rand() < 0.5 ? 1_000_000 : Math.floor(rand() * total);
      const plan = planCompaction(messages, { keepRecentTokens, targetTokens });
      const context = `seed round ${round}`;

      expect([...plan.summarize, ...plan.keep], context).toEqual(messages);
      plan.keep.forEach((m, i) => {
        expect(m, context).toBe(messages[plan.cutIndex + i]);
      });
      expect(plan.cutIndex, context).toBe(plan.summarize.length);
      expect(pairsIntact(messages, plan.cutIndex), context).toBe(true);

      const legal = messages.map((_, i) => isLegalCut(messages, i));
      if (plan.summarize.length > 0) {
        cutsMade++;
        expect(plan.keep[0]?.role, context).toBe("user");
        expect(legal[plan.cutIndex], context).toBe(true);
      } else {
        expect(plan.cutIndex, context).toBe(0);
      }

      // Every tool result kept has its call kept, and every call kept has all its results kept.
      const calls = callIndexById(messages);
      messages.forEach((m, j) => {
        if (m.role !== "tool") return;
        const at = calls.get(m.toolCallId);
        if (at !== undefined && j >= plan.cutIndex) expect(at >= plan.cutIndex, context).toBe(true);
        if (at !== undefined && at >= plan.cutIndex) expect(j >= plan.cutIndex, context).toBe(true);
      });

      // The last user message always stays.
      const lastUser = messages.findLastIndex((m) => m.role === "user");
      if (lastUser >= 0) expect(lastUser >= plan.cutIndex, context).toBe(true);

      // The cut is the earliest legal one whose tail fits; if none fits, the latest legal one.
      const budget = Math.min(keepRecentTokens, targetTokens);
      const legalCuts = legal.flatMap((ok, i) => (ok ? [i] : []));
      const fitting = legalCuts.filter((i) => tokens(messages.slice(i)) <= budget);
      let expected = 0;
      if (total > budget && legalCuts.length > 0)
        expected = fitting[0] ?? legalCuts[legalCuts.length - 1] ?? 0;
      expect(plan.cutIndex, context).toBe(expected);
      expect(plan.withinTarget, context).toBe(tokens(plan.keep) <= targetTokens);
    }
    // Guard against a generator that never exercises the cut.
    expect(cutsMade).toBeGreaterThan(500);
  });
});

describe("pruneToolResults", () => {
  const big = (ch: string) => ch.repeat(4000);
  const messages: Message[] = [
    user("start"),
    call("a"),
    result("a", big("a")),
    result("b-short", "tiny"),
    answer("read it"),
    user("next"),
    call("c"),
    { ...result("c", big("c")), isError: true },
    answer("hmm"),
    user("again"),
    call("d"),
    result("d", big("d")),
    answer("done"),
  ];

  it("replaces old results with a placeholder and keeps recent ones intact", () => {
    const recent = tokens(messages.slice(9));
    const pruned = pruneToolResults(messages, { protectRecentTokens: recent, minChars: 100 });
    expect(pruned.messages[2]).toEqual({ ...result("a", ""), content: "[tool result pruned: 4000 chars]" });
    expect(pruned.messages[7]).toEqual({
      role: "tool",
      toolCallId: "c",
      toolName: "shell",
      isError: true,
      content: "[tool result pruned: 4000 chars]",
    });
    expect(pruned.messages[3]).toBe(messages[3]);
    expect(pruned.messages[11]).toBe(messages[11]);
    expect(pruned.prunedCount).toBe(2);
    expect(pruned.savedTokens).toBe(tokens(messages) - tokens(pruned.messages));
    expect(pruned.savedTokens).toBeGreaterThan(1900);
    // The input is left alone.
    expect((messages[2] as ToolResultMessage).content).toBe(big("a"));
  });

  it("never prunes results the model has not seen yet", () => {
    const pending = [...messages.slice(0, 11), result("d", big("d"))];
    const pruned = pruneToolResults(pending, { protectRecentTokens: 0, minChars: 10 });
    expect(pruned.messages[11]).toBe(pending[11]);
    expect(pruned.prunedCount).toBe(2);
  });

  it("prunes nothing when everything is inside the window, and is idempotent", () => {
    const none = pruneToolResults(messages, { protectRecentTokens: 1_000_000, minChars: 10 });
    expect(none.messages).toEqual(messages);
    expect(none.savedTokens).toBe(0);
    const once = pruneToolResults(messages, { protectRecentTokens: 0, minChars: 10 });
    const twice = pruneToolResults(once.messages, { protectRecentTokens: 0, minChars: 10 });
    expect(twice.prunedCount).toBe(0);
    expect(twice.messages).toEqual(once.messages);
  });

  it("prunes images in old results and says how many there were", () => {
    const withImage: Message[] = [
      user("look"),
      call("s"),
      {
        role: "tool",
        toolCallId: "s",
        toolName: "screenshot",
        content: [
          { type: "text", text: "screen" },
          { type: "image", mimeType: "image/png", data: "AAAA" },
        ],
      },
      answer("seen"),
      user("thanks"),
    ];
    const pruned = pruneToolResults(withImage, { protectRecentTokens: 1, minChars: 1000 });
    expect((pruned.messages[2] as ToolResultMessage).content).toBe("[tool result pruned: 6 chars, 1 image]");
    expect(pruned.savedTokens).toBeGreaterThan(990);
  });
});
