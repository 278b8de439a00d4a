import { describe, expect, it } from "vitest";
import { buildSummaryPrompt, SUMMARY_SYSTEM_PROMPT } from "../../../src/agent/context/index.js";
import type { Message } from "../../../src/llm/types.js";

const transcript: Message[] = [
  { role: "user", content: "My project lives in /srv/app. Please check the config." },
  {
    role: "assistant",
    content: [
      { type: "reasoning", text: "SECRET-CHAIN-OF-THOUGHT" },
      { type: "text", text: "Let me look." },
      { type: "tool_call", id: "c1", name: "read_file", arguments: '{"path":"/srv/app/config.json"}' },
    ],
  },
  { role: "tool", toolCallId: "c1", toolName: "read_file", content: `BEGIN${"z".repeat(10_000)}FINISH` },
  { role: "tool", toolCallId: "c2", toolName: "shell", content: "permission denied", isError: true },
  {
    role: "user",
    content: [
      { type: "text", text: "Here is a screenshot" },
      { type: "image", mimeType: "image/png", data: "AAAA" },
    ],
  },
];

describe("buildSummaryPrompt", () => {
  it("asks for a dense summary that folds in the previous one", () => {
    const context = buildSummaryPrompt("- The user prefers tabs.\n- Deploy target: fly.io", transcript);
    expect(context.system).toBe(SUMMARY_SYSTEM_PROMPT);
    expect(context.system).toMatch(/previous summary/i);
    expect(context.system).toMatch(/file paths/);
    expect(context.system).toMatch(/open tasks/);
    expect(context.tools).toBeUndefined();
    expect(context.messages).toHaveLength(1);
    const body = context.messages[0]?.content as string;
    expect(body).toContain(
      "<previous_summary>\n- The user prefers tabs.\n- Deploy target: fly.io\n</previous_summary>",
    );
    expect(body.indexOf("<previous_summary>")).toBeLessThan(body.indexOf("<transcript>"));
  });

  it("renders the transcript as text: tool calls as name(args), results shortened, reasoning omitted", () => {
    const body = buildSummaryPrompt(undefined, transcript).messages[0]?.content as string;
    expect(body).toContain("There is no previous summary yet.");
    expect(body).not.toContain("<previous_summary>");
    expect(body).toContain("User: My project lives in /srv/app. Please check the config.");
    expect(body).toContain("Assistant: Let me look.");
    expect(body).toContain('Assistant called: read_file({"path":"/srv/app/config.json"})');
    expect(body).not.toContain("SECRET-CHAIN-OF-THOUGHT");
    expect(body).toMatch(/Tool result \(read_file\): BEGINz+\n\[… \d+ characters cut …\]\nz+FINISH/);
    expect(body.length).toBeLessThan(3_000);
    expect(body).toContain("Tool error (shell): permission denied");
    expect(body).toContain("User: Here is a screenshot\n[image]");
  });

  it("honours custom shortening limits", () => {
    const body = buildSummaryPrompt(undefined, transcript, { maxToolResultChars: 100, maxArgumentChars: 60 })
      .messages[0]?.content as string;
    const line = body.split("\n\n").find((b) => b.startsWith("Tool result (read_file)")) ?? "";
    expect(line.length).toBeLessThanOrEqual("Tool result (read_file): ".length + 100);
  });
});
