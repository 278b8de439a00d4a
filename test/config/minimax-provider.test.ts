/**
 * MiniMax as a built-in provider (issue 34, item 15): `minimax:<model>` resolves to its
 * OpenAI-compatible endpoint with MINIMAX_API_KEY (MINIMAX_BASE_URL to move it), is in the model
 * catalogue, and its answers stream through the OpenAI adapter, thinking apart from the text.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { catalogModels, lookupModel } from "../../src/config/model-catalog.js";
import { resolveModel } from "../../src/config/resolve-model.js";
import { openaiAdapter } from "../../src/llm/openai/index.js";
import { stream } from "../../src/llm/providers.js";
import type { ModelEvent } from "../../src/llm/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";

let llm: FakeLlmServer;
beforeAll(async () => {
  llm = await startFakeLlmServer({ strict: true });
});
afterAll(async () => {
  await llm.close();
});

const configWith = (env: Record<string, string>) => {
  const dir = mkdtempSync(join(tmpdir(), "dimsum-minimax-"));
  return loadConfig({ cwd: dir, env: { DIMSUM_HOME: join(dir, "home"), ...env } });
};

describe("the MiniMax provider", () => {
  it("resolves minimax:<model> to MiniMax's OpenAI-compatible API with MINIMAX_API_KEY", () => {
    const model = resolveModel(configWith({ MINIMAX_API_KEY: "mm-key-1" }), "minimax:MiniMax-M2");
    expect(model).toMatchObject({
      provider: "minimax",
      id: "MiniMax-M2",
      protocol: "openai",
      baseUrl: "https://api.minimax.io/v1",
      apiKey: "mm-key-1",
      contextWindow: 204_800,
    });
    expect(model.pricing).toMatchObject({ input: 0.3, output: 1.2 });
    expect(catalogModels("minimax")).toContain("MiniMax-M2");
    expect(lookupModel("MiniMax-M1")?.contextWindow).toBe(1_000_000);
    expect(() => resolveModel(configWith({}), "minimax:MiniMax-M2")).toThrow(
      expect.objectContaining({
        message: "no API key for minimax",
        hint: expect.stringContaining("MINIMAX_API_KEY"),
      }),
    );
  });

  it("streams an answer from MINIMAX_BASE_URL, asking for the thinking apart", async () => {
    llm.enqueue({ text: "Hello from MiniMax." });
    const model = resolveModel(
      configWith({ MINIMAX_API_KEY: "mm-key-2", MINIMAX_BASE_URL: `${llm.url}/v1` }),
      "minimax:MiniMax-M2",
    );
    const events: ModelEvent[] = [];
    for await (const event of stream(model, {
      system: "Be brief.",
      messages: [{ role: "user", content: "hi" }],
    }))
      events.push(event);
    expect(events.at(-1)).toMatchObject({ type: "done" });
    expect(
      events
        .filter((e) => e.type === "text_delta")
        .map((e) => (e as { text: string }).text)
        .join(""),
    ).toBe("Hello from MiniMax.");
    const request = llm.requests[0];
    expect(request?.path).toBe("/v1/chat/completions");
    expect(request?.headers.authorization).toBe("Bearer mm-key-2");
    expect(request?.body).toMatchObject({ model: "MiniMax-M2", reasoning_split: true });
  });

  it("reads MiniMax's reasoning_details as thinking, not as answer text", () => {
    const parser = openaiAdapter.createParser(
      resolveModel(configWith({ MINIMAX_API_KEY: "k" }), "minimax:MiniMax-M2"),
    );
    const chunk = (delta: object, finish: string | null = null) => ({
      data: JSON.stringify({
        id: "r",
        model: "MiniMax-M2",
        choices: [{ index: 0, delta, finish_reason: finish }],
      }),
    });
    const events = [
      ...parser.push(
        chunk({ role: "assistant", reasoning_details: [{ type: "reasoning.text", text: "Let me see." }] }),
      ),
      ...parser.push(chunk({ content: "Four." }, "stop")),
      ...parser.push({ data: "[DONE]" }),
      ...parser.finish(),
    ];
    expect(
      events.filter((e) => e.type === "reasoning_delta").map((e) => (e as { text: string }).text),
    ).toEqual(["Let me see."]);
    expect(events.filter((e) => e.type === "text_delta").map((e) => (e as { text: string }).text)).toEqual([
      "Four.",
    ]);
  });
});
