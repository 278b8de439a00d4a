import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DimsumError } from "../../src/errors.js";
import { embed } from "../../src/llm/embeddings.js";
import type { ModelSpec } from "../../src/llm/types.js";
import { createEmbedder } from "../../src/memory/embedder.js";
import {
  type FakeEmbeddingsServer,
  hashEmbedding,
  startFakeEmbeddingsServer,
} from "../../src/testing/fake-embeddings-server.js";

let server: FakeEmbeddingsServer;
beforeAll(async () => {
  server = await startFakeEmbeddingsServer({ dims: 32 });
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
});

const openai = (): ModelSpec => ({
  provider: "openai",
  id: "text-embedding-3-small",
  protocol: "openai",
  baseUrl: `${server.url}/v1`,
  apiKey: "sk-test",
  apiKeyEnv: "OPENAI_API_KEY",
  contextWindow: 8192,
});
const gemini = (): ModelSpec => ({
  provider: "gemini",
  id: "text-embedding-004",
  protocol: "gemini",
  baseUrl: server.url,
  apiKey: "g-key",
  contextWindow: 2048,
});
const noWait = { sleep: async () => {}, random: () => 0 };

async function rejection(p: Promise<unknown>): Promise<DimsumError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof DimsumError) return err;
    throw err;
  }
  throw new Error("expected a rejection");
}

describe("hashEmbedding", () => {
  it("is deterministic, unit length, and closer for texts that share words", () => {
    const a = hashEmbedding("dark roast coffee", 64);
    expect(Array.from(a)).toEqual(Array.from(hashEmbedding("Dark roast coffee!", 64)));
    expect(a.reduce((s, x) => s + x * x, 0)).toBeCloseTo(1, 6);
    const dot = (x: Float32Array, y: Float32Array) => x.reduce((s, v, i) => s + v * y[i]!, 0);
    expect(dot(a, hashEmbedding("coffee roasting", 64))).toBeGreaterThan(
      dot(a, hashEmbedding("tennis match", 64)),
    );
    expect(hashEmbedding("咖啡", 16)).toHaveLength(16);
  });
});

describe("embed over HTTP", () => {
  it("calls an OpenAI-compatible /embeddings in batches, in input order", async () => {
    const texts = ["one", "two", "three", "four", "five"];
    const vectors = await embed(openai(), texts, { batchSize: 2 });
    expect(vectors.map((v) => Array.from(v))).toEqual(texts.map((t) => Array.from(hashEmbedding(t, 32))));
    expect(server.requests.map((r) => [r.path, r.inputs])).toEqual([
      ["/v1/embeddings", 2],
      ["/v1/embeddings", 2],
      ["/v1/embeddings", 1],
    ]);
    expect(server.requests[0]?.headers.authorization).toBe("Bearer sk-test");
    expect(server.requests[0]?.body).toMatchObject({
      model: "text-embedding-3-small",
      encoding_format: "float",
    });
  });

  it("passes the requested dimensions", async () => {
    const [v] = await embed(openai(), ["x"], { dimensions: 8 });
    expect(v).toHaveLength(8);
    expect(server.requests[0]?.body).toMatchObject({ dimensions: 8 });
  });

  it("calls Gemini batchEmbedContents with the key header", async () => {
    const vectors = await embed(gemini(), ["alpha", "beta"], { dimensions: 16 });
    expect(vectors.map((v) => Array.from(v))).toEqual(
      ["alpha", "beta"].map((t) => Array.from(hashEmbedding(t, 16))),
    );
    expect(server.requests[0]?.path).toBe("/v1beta/models/text-embedding-004:batchEmbedContents");
    expect(server.requests[0]?.headers["x-goog-api-key"]).toBe("g-key");
    expect(server.requests[0]?.body).toEqual({
      requests: [
        {
          model: "models/text-embedding-004",
          content: { parts: [{ text: "alpha" }] },
          outputDimensionality: 16,
        },
        {
          model: "models/text-embedding-004",
          content: { parts: [{ text: "beta" }] },
          outputDimensionality: 16,
        },
      ],
    });
  });

  it("retries a 429, honouring Retry-After", async () => {
    server.failNext({ status: 429, headers: { "retry-after": "2" } });
    const delays: number[] = [];
    const vectors = await embed(openai(), ["retry me"], {
      sleep: async (ms) => {
        delays.push(ms);
      },
    });
    expect(vectors).toHaveLength(1);
    expect(delays).toEqual([2000]);
    expect(server.requests).toHaveLength(2);
  });

  it("gives up after the retries with a rate-limit error", async () => {
    server.failNext({ status: 429 }, 3);
    const err = await rejection(embed(openai(), ["x"], { ...noWait, retry: { maxRetries: 2 } }));
    expect(err.code).toBe("rate_limit");
    expect(err.message).toContain("after 3 attempts");
    expect(server.requests).toHaveLength(3);
  });

  it("does not retry an auth failure", async () => {
    server.failNext({ status: 401, body: { error: { message: "Incorrect API key provided" } } });
    const err = await rejection(embed(openai(), ["x"], noWait));
    expect(err.code).toBe("auth");
    expect(err.message).toContain("Incorrect API key provided");
    expect(err.hint).toContain("OPENAI_API_KEY");
    expect(server.requests).toHaveLength(1);
  });

  it("fails fast without a key, for Anthropic, and on a refused connection", async () => {
    const { apiKey: _drop, ...keyless } = openai();
    expect((await rejection(embed(keyless, ["x"]))).code).toBe("config");
    const anthropic = { ...openai(), provider: "anthropic", protocol: "anthropic" as const };
    expect((await rejection(embed(anthropic, ["x"]))).message).toContain("has no embeddings API");
    const closed = await startFakeEmbeddingsServer();
    await closed.close();
    const down = await rejection(
      embed({ ...openai(), baseUrl: `${closed.url}/v1` }, ["x"], { ...noWait, retry: { maxRetries: 1 } }),
    );
    expect(down.code).toBe("provider_unavailable");
    expect(down.message).toContain("connection refused");
  });

  it("rejects a response with the wrong number of vectors", async () => {
    server.failNext({ status: 200, body: { data: [] } });
    const err = await rejection(embed(openai(), ["a", "b"], noWait));
    expect(err.message).toContain("0 embeddings for 2 inputs");
  });

  it("backs a memory Embedder named provider:model", async () => {
    const embedder = createEmbedder(openai());
    expect(embedder.model).toBe("openai:text-embedding-3-small");
    expect(await embedder.embed(["hi"])).toHaveLength(1);
  });
});
