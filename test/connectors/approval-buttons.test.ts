import { describe, expect, it } from "vitest";
import { approvalButtons } from "../../src/connectors/approval-buttons.js";
import { approvalCardParams } from "../../src/connectors/dingtalk/dingtalk-card.js";
import { approvalKeyboard } from "../../src/connectors/telegram/telegram-kind.js";

describe("approval buttons", () => {
  it("offer Approve / Always / Reject, and no Always for network asked with request_network (granted for one run)", () => {
    expect(approvalButtons({ tool: "execute_command" }).map((b) => b.choice)).toEqual([
      "approve",
      "always",
      "reject",
    ]);
    expect(approvalButtons({ tool: "request_network" }).map((b) => b.choice)).toEqual(["approve", "reject"]);
    const prompt = {
      token: "t".repeat(16),
      tool: "request_network",
      summary: "coder wants network access",
      reason: "npm",
    };
    const keyboard = approvalKeyboard(prompt).inline_keyboard[0] ?? [];
    expect(keyboard.map((b) => b.text)).toEqual(["✅ Approve", "❌ Reject"]);
    expect(JSON.stringify(approvalCardParams(prompt))).not.toContain("Always");
  });
});
