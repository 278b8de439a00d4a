import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createModelReranker, parseRerankReply } from "../../src/knowledge/retrieval/rerank.js";
import type { Reranker } from "../../src/knowledge/types.js";
import { streamFunctionFor } from "../../src/llm/providers.js";
import type { ModelSpec, StreamFunction } from "../../src/llm/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { newService } from "./helpers.js";

let server: FakeLlmServer;
let stream: StreamFunction;
let model: ModelSpec;

beforeAll(async () => {
  server = await startFakeLlmServer({ strict: true });
  stream = await streamFunctionFor("openai");
  model = {
    provider: "openai",
    id: "fake-ranker",
    protocol: "openai",
    baseUrl: `${server.url}/v1`,
    contextWindow: 8000,
  };
});
afterAll(() => server.close());
beforeEach(() => server.reset());

const docs = [
  {
    kind: "bytes" as const,
    name: "a.md",
    data: "# A\n\nPropeller propeller propeller efficiency at cruise.",
  },
  { kind: "bytes" as const, name: "b.md", data: "# B\n\nPropeller propeller noise in the cabin." },
  { kind: "bytes" as const, name: "c.md", data: "# C\n\nA propeller is also called an airscrew." },
];

async function ranked(reranker: Reranker | undefined, options: { rerankTimeoutMs?: number } = {}) {
  const { kb } = newService({ ...(reranker ? { reranker } : {}), ...options });
  await kb.ingest("kb", docs);
  return kb;
}

describe("parseRerankReply", () => {
  const ids = ["101", "102", "103"];
  it("accepts the shapes models produce", () => {
    const expected = new Map([
      ["103", 9],
      ["101", 2.5],
    ]);
    expect(parseRerankReply('{"scores":[{"id":"P3","score":9},{"id":"P1","score":2.5}]}', ids)).toEqual(
      expected,
    );
    expect(
      parseRerankReply('Here:\n```json\n[{"id":"[P3]","score":"9"},{"id":"p1","score":2.5}]\n```', ids),
    ).toEqual(expected);
    expect(parseRerankReply('Sure! {"P3": 9, "P1": 2.5, "P9": 4}', ids)).toEqual(expected);
    expect(parseRerankReply('{"scores":[{"id":"3","relevance":42}]}', ids)).toEqual(new Map([["103", 10]]));
  });

  it("rejects replies without a usable score", () => {
    expect(() => parseRerankReply("I think passage two is best.", ids)).toThrow(/holds no scores/);
    expect(() => parseRerankReply('{"scores":[{"id":"P7","score":3}]}', ids)).toThrow(/holds no scores/);
    expect(() => parseRerankReply("", ids)).toThrow(/\(empty reply\)/);
  });
});

describe("reranking in search", () => {
  it("reorders the fused top passages by the model's scores", async () => {
    const reranker = createModelReranker({ stream, model });
    const kb = await ranked(reranker);
    const fused = await kb.search({ query: "propeller", rerank: false });
    expect(fused.trace.rerank).toEqual({ status: "skipped", reason: "turned off for this query" });
    const order = fused.passages.map((p) => p.citation.title);
    server.enqueue({
      text: JSON.stringify({
        scores: [
          { id: "P1", score: 1 },
          { id: "P2", score: 4 },
          { id: "P3", score: 9 },
        ],
      }),
    });
    const result = await kb.search({ query: "propeller" });
    expect(result.trace.rerank).toMatchObject({ status: "ok", candidates: 3 });
    expect(result.passages.map((p) => p.citation.title)).toEqual([order[2], order[1], order[0]]);
    expect(result.passages.map((p) => p.rerankScore)).toEqual([9, 4, 1]);
    expect(result.passages[0]!.score).toBe(9);
    const body = server.requests[0]?.body as { messages: Array<{ role: string; content: string }> };
    const prompt = body.messages.find((m) => m.role === "user")?.content ?? "";
    expect(prompt).toContain("Query: propeller");
    expect(prompt).toContain(`[P1] ${order[0]}`);
    expect(prompt).toContain("[P3]");
  });

  it("keeps the fused order and says why when the reply is garbage, an error, or too slow", async () => {
    const kb = await ranked(createModelReranker({ stream, model }), { rerankTimeoutMs: 150 });
    const fused = (await kb.search({ query: "propeller", rerank: false })).passages.map(
      (p) => p.citation.chunkId,
    );

    server.enqueue({ text: "Passage two looks best to me." });
    const garbage = await kb.search({ query: "propeller" });
    expect(garbage.trace.rerank).toMatchObject({
      status: "failed",
      reason: expect.stringContaining("holds no scores"),
    });
    expect(garbage.trace.warnings[0]).toMatch(/^reranking failed, fused order kept: /);
    expect(garbage.passages.map((p) => p.citation.chunkId)).toEqual(fused);
    expect(garbage.passages.every((p) => p.rerankScore === undefined)).toBe(true);

    server.enqueue({ error: { status: 400 } });
    const error = await kb.search({ query: "propeller" });
    expect(error.trace.rerank.status).toBe("failed");
    expect(error.passages.map((p) => p.citation.chunkId)).toEqual(fused);

    server.enqueue({ delayMs: 3000, text: '{"P1": 1}' });
    const slow = await kb.search({ query: "propeller" });
    expect(slow.trace.rerank).toMatchObject({ status: "failed", reason: "no answer within 150 ms" });
    expect(slow.passages.map((p) => p.citation.chunkId)).toEqual(fused);
  });

  it("bounds a reranker that ignores its signal, and passes cancellation through", async () => {
    const stuck: Reranker = { name: "stuck", rerank: () => new Promise(() => {}) };
    const kb = await ranked(stuck, { rerankTimeoutMs: 50 });
    const result = await kb.search({ query: "propeller" });
    expect(result.trace.rerank).toMatchObject({ status: "failed", reason: "no answer within 50 ms" });
    expect(result.passages).toHaveLength(3);

    const slowKb = await ranked(stuck, { rerankTimeoutMs: 60_000 });
    const controller = new AbortController();
    const pending = slowKb.search({ query: "propeller", signal: controller.signal });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: "aborted" });
  });

  it("skips reranking for a single passage", async () => {
    const kb = await ranked(createModelReranker({ stream, model }));
    const result = await kb.search({ query: "airscrew" });
    expect(result.passages).toHaveLength(1);
    expect(result.trace.rerank).toEqual({ status: "skipped", reason: "fewer than two passages" });
    expect(server.requests).toHaveLength(0);
  });
});
