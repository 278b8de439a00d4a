import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { streamFunctionFor } from "../../src/llm/providers.js";
import type { Message, ModelSpec, StreamFunction } from "../../src/llm/types.js";
import { extractMemories, saveExtracted } from "../../src/memory/extract.js";
import { memoryLayers } from "../../src/memory/injection.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { hashEmbedder, newMemoryStore } from "./helpers.js";

let server: FakeLlmServer;
let stream: StreamFunction;
let model: ModelSpec;

beforeAll(async () => {
  server = await startFakeLlmServer({ strict: true });
  stream = await streamFunctionFor("openai");
  model = {
    provider: "openai",
    id: "fake-extractor",
    protocol: "openai",
    baseUrl: `${server.url}/v1`,
    contextWindow: 8000,
  };
});
afterAll(() => server.close());
beforeEach(() => server.reset());

const conversation: Message[] = [
  { role: "user", content: "Please always answer me in Chinese from now on. Also, I'm vegetarian." },
  { role: "assistant", content: [{ type: "text", text: "好的，以后我会用中文回答。" }] },
];

const run = (existing: string[] = []) => extractMemories({ stream, model, messages: conversation, existing });

describe("extractMemories", () => {
  it("asks the model with the transcript and existing memories, and parses its JSON list", async () => {
    server.enqueue({
      text:
        "```json\n" +
        JSON.stringify([
          { text: "User wants answers in Chinese", type: "procedural", importance: 8, tags: ["Language"] },
          { text: "User is vegetarian", type: "semantic", importance: 7.6 },
        ]) +
        "\n```",
    });
    const result = await run(["User lives in Berlin"]);
    expect(result.warnings).toEqual([]);
    expect(result.memories).toEqual([
      { text: "User wants answers in Chinese", type: "procedural", importance: 8, tags: ["language"] },
      { text: "User is vegetarian", type: "semantic", importance: 8, tags: [] },
    ]);
    const body = server.requests[0]?.body as { messages: Array<{ role: string; content: string }> };
    const prompt = body.messages.find((m) => m.role === "user")?.content ?? "";
    expect(prompt).toContain("Existing memories:\n- User lives in Berlin");
    expect(prompt).toContain("User: Please always answer me in Chinese");
    expect(prompt).toContain("Assistant: 好的，以后我会用中文回答。");
  });

  it("turns bad replies into zero memories and a warning, never a throw", async () => {
    server.enqueue({ text: "Sure! The user likes Chinese." });
    const prose = await run();
    expect(prose.memories).toEqual([]);
    expect(prose.warnings[0]).toContain("not a JSON array");

    server.enqueue({
      text: '[{"text": "ok one", "type": "vibes"}, {"type": "semantic"}, 42, {"text": "User lives in Berlin"}]',
    });
    const mixed = await run(["user lives in berlin"]);
    expect(mixed.memories).toEqual([{ text: "ok one", type: "semantic", importance: 5, tags: [] }]);
    expect(mixed.warnings).toEqual([
      "memory extraction: skipped item 1 has no text",
      "memory extraction: skipped item 2 is not an object",
    ]);

    server.enqueue({ error: { status: 400 } });
    const failed = await run();
    expect(failed.memories).toEqual([]);
    expect(failed.warnings[0]).toMatch(/^memory extraction failed: /);

    server.enqueue({ text: '{"memories": [{"text": "wrapped", "type": "episodic", "importance": 99}]}' });
    expect((await run()).memories).toEqual([{ text: "wrapped", type: "episodic", importance: 10, tags: [] }]);
  });

  it("does not call the model for an empty conversation", async () => {
    const result = await extractMemories({ stream, model, messages: [] });
    expect(result).toEqual({ memories: [], warnings: [] });
    expect(server.requests).toHaveLength(0);
  });
});

describe("across sessions", () => {
  it("a preference stated in session 1 is in the context of session 2, and absent for another user", async () => {
    const { store } = newMemoryStore({ embedder: hashEmbedder() });
    server.enqueue({
      text: JSON.stringify([{ text: "User prefers answers in Chinese", type: "procedural", importance: 8 }]),
    });
    const extracted = await extractMemories({ stream, model, messages: conversation });
    const saved = await saveExtracted(
      store,
      { userId: "alice", sessionId: "session-1", runId: "run-1" },
      extracted.memories,
    );
    expect(saved[0]?.memory).toMatchObject({
      confidence: 0.8,
      sourceSessionId: "session-1",
      sourceRunId: "run-1",
    });

    const session2 = await memoryLayers(store, {
      userId: "alice",
      query: "Which language should answers use?",
    });
    expect(session2.memories.map((m) => m.text)).toEqual(["User prefers answers in Chinese"]);
    const otherUser = await memoryLayers(store, {
      userId: "bob",
      query: "Which language should answers use?",
    });
    expect(otherUser.memories).toEqual([]);
  });
});
