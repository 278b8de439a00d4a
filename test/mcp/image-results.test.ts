/**
 * An image a real stdio MCP server's tool returns (the reference "everything" server's
 * `get-tiny-image`) reaches the model as an image in each protocol's wire form on the next request:
 * OpenAI chat completions in a user message right after the tool messages (tool messages cannot carry
 * images), Anthropic inside the `tool_result`, Gemini as inline data after the `functionResponse`.
 * A text-only model gets a placeholder naming the image instead.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/agent/events.js";
import { runAgent } from "../../src/agent/run-agent.js";
import type { ModelSpec, WireProtocol } from "../../src/llm/types.js";
import { McpManager } from "../../src/mcp/manager.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { defaultToolsConfig } from "../../src/tools/builtin/defaults.js";
import { memoryTodoStore } from "../../src/tools/memory-todo-store.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { fakeModel, fastRetry } from "../support/fake-models.js";
import { everything, testEnv } from "./helpers.js";

const TOOL = "everything_get-tiny-image";

describe("images returned by MCP tools", () => {
  let llm: FakeLlmServer;
  let manager: McpManager;
  let png = "";

  beforeAll(async () => {
    llm = await startFakeLlmServer({ strict: true });
    manager = new McpManager({ servers: [everything()], env: testEnv, registry: new ToolRegistry([]) });
    await manager.start();
  });
  afterAll(async () => {
    await manager.close();
    await llm.close();
  });

  /** Runs one tool call of the tiny-image tool and returns the request that followed it. */
  async function secondRequest(model: ModelSpec): Promise<Record<string, unknown>> {
    llm.reset();
    llm.enqueue({ toolCalls: [{ name: TOOL, args: {} }] }, { text: "A tiny image." });
    const events: AgentEvent[] = [];
    for await (const event of runAgent({
      model,
      messages: [{ role: "user", content: "Show me the tiny image." }],
      tools: manager.registry,
      toolEnvironment: { workspace: process.cwd(), todos: memoryTodoStore(), config: defaultToolsConfig() },
      streamOptions: fastRetry,
    })) {
      events.push(event);
    }
    expect(events.at(-1)?.type).toBe("done");
    const result = events.find((e) => e.type === "tool_result");
    expect(result?.type === "tool_result" && result.ok).toBe(true);
    expect(llm.requests).toHaveLength(2);
    return llm.requests[1]?.body as Record<string, unknown>;
  }

  /** The PNG the server returns, as its tool result's image part says (the same bytes every call). */
  async function tinyImage(): Promise<string> {
    if (png) return png;
    const body = await secondRequest(fakeModel(llm, "anthropic"));
    png = /"data":"(iVBOR[^"]+)"/.exec(JSON.stringify(body))?.[1] ?? "";
    expect(png).not.toBe("");
    return png;
  }

  it("OpenAI chat completions: the tool message says where the image is; a user message right after carries it", async () => {
    const image = await tinyImage();
    const body = await secondRequest(fakeModel(llm, "openai"));
    const messages = body.messages as Array<{ role: string; content: unknown; tool_call_id?: string }>;
    const toolIndex = messages.findIndex((m) => m.role === "tool");
    expect(toolIndex).toBeGreaterThan(0);
    expect(messages[toolIndex - 1]?.role).toBe("assistant");
    expect(String(messages[toolIndex]?.content)).toMatch(/\[image: image\/png, \d+ bytes\]/);
    const next = messages[toolIndex + 1];
    expect(next?.role).toBe("user");
    expect(next?.content).toEqual([
      { type: "text", text: `Image from tool ${TOOL} (call ${messages[toolIndex]?.tool_call_id}):` },
      { type: "image_url", image_url: { url: `data:image/png;base64,${image}` } },
    ]);
    expect(messages).toHaveLength(toolIndex + 2);
  });

  it("Anthropic: the image is a block inside the tool_result", async () => {
    const image = await tinyImage();
    const body = await secondRequest(fakeModel(llm, "anthropic"));
    const messages = body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
    const last = messages.at(-1);
    expect(last?.role).toBe("user");
    const result = last?.content.find((b) => b.type === "tool_result") as { content: unknown[] } | undefined;
    expect(result?.content).toContainEqual({
      type: "image",
      source: { type: "base64", media_type: "image/png", data: image },
    });
  });

  it("Gemini: the image follows the functionResponse as inline data", async () => {
    const image = await tinyImage();
    const body = await secondRequest(fakeModel(llm, "gemini"));
    const contents = body.contents as Array<{ role: string; parts: Array<Record<string, unknown>> }>;
    const parts = contents.at(-1)?.parts ?? [];
    expect(parts[0]?.functionResponse).toMatchObject({ name: TOOL });
    expect(parts[1]).toEqual({ inlineData: { mimeType: "image/png", data: image } });
  });

  it.each<WireProtocol>(["openai", "anthropic", "gemini"])(
    "%s, a text-only model: a placeholder naming the image, no image data",
    async (protocol) => {
      const image = await tinyImage();
      const body = await secondRequest(fakeModel(llm, protocol, { input: { images: false, pdf: false } }));
      const sent = JSON.stringify(body);
      expect(sent).not.toContain(image);
      expect(sent).toContain(`[image from ${TOOL} (image/png) left out: this model cannot read images]`);
    },
  );
});
