import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryCommand } from "../../src/cli/commands/memory.js";
import { loadConfig } from "../../src/config/load-config.js";
import { resolveEmbeddingModel } from "../../src/memory/embedding-config.js";
import {
  type FakeEmbeddingsServer,
  startFakeEmbeddingsServer,
} from "../../src/testing/fake-embeddings-server.js";
import { tempDir } from "./helpers.js";

let embeddings: FakeEmbeddingsServer;
beforeAll(async () => {
  embeddings = await startFakeEmbeddingsServer();
});
afterAll(() => embeddings.close());

function cli(env: Record<string, string> = {}) {
  const home = tempDir();
  const io = { out: "", err: "" };
  const streams = {
    stdout: { write: (s: string) => (io.out += s) },
    stderr: { write: (s: string) => (io.err += s) },
    env: { DIMSUM_HOME: home, ...env },
    cwd: home,
  };
  const run = async (action: string, args: string[], options: Parameters<typeof memoryCommand>[2] = {}) => {
    io.out = "";
    io.err = "";
    const code = await memoryCommand(action, args, { user: "alice", ...options }, streams);
    return { code, out: io.out, err: io.err };
  };
  return { run, home };
}

describe("dimsum memory", () => {
  it("adds, lists, searches and forgets a user's memories in <home>/dimsum.db", async () => {
    const { run } = cli();
    expect(await run("add", ["Alice", "prefers", "tea"], { tags: "drinks", importance: 6 })).toEqual({
      code: 0,
      out: "added #1\n",
      err: "",
    });
    expect((await run("add", ["Alice prefers tea."])).out).toBe("merged into #1: Alice prefers tea.\n");
    await run("add", ["Meeting with Bob on Friday"], { type: "episodic" });
    const list = await run("list", []);
    expect(list.out).toMatch(
      /^#2 {2}episodic {4}imp {2}5 {2}\d{4}-\d\d-\d\d {2}Meeting with Bob on Friday\n/,
    );
    expect(list.out).toContain("#1  semantic    imp  6");
    expect(list.out).toContain("Alice prefers tea. [drinks]\n(2 of 2)\n");
    expect((await run("list", [], { type: "episodic" })).out).not.toContain("tea");

    const search = await run("search", ["tea"]);
    expect(search.out).toMatch(/^mode: bm25\n#1 .* score 0\.\d{4} {2}Alice prefers tea\. \[drinks\]\n$/);
    expect((await run("search", ["tea"], { user: "bob" })).out).toBe("mode: bm25\nno memory matched\n");

    expect(await run("forget", ["#1"])).toMatchObject({ code: 0, out: "forgot #1\n" });
    expect(await run("forget", ["1"])).toMatchObject({ code: 1, err: "no memory #1 for user alice\n" });
    const json = await run("list", [], { json: true });
    expect(JSON.parse(json.out.trim())).toMatchObject({ id: "2", type: "episodic" });
  });

  it("reports usage errors with exit code 2", async () => {
    const { run } = cli();
    const unknown = await run("purge", []);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('unknown memory action "purge"');
    expect((await run("search", [])).code).toBe(2);
    const badType = await run("add", ["x"], { type: "vibes" });
    expect(badType.code).toBe(2);
    expect(badType.err).toContain("--type must be one of semantic, episodic, procedural");
  });

  it("searches in hybrid mode when DIMSUM_EMBEDDING_MODEL is set", async () => {
    const { run } = cli({
      DIMSUM_EMBEDDING_MODEL: "openai:text-embedding-3-small",
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: `${embeddings.url}/v1`,
    });
    await run("add", ["The user repairs old bicycles"]);
    const search = await run("search", ["bicycles"]);
    expect(search.out).toMatch(/^mode: hybrid\n#1 /);
    expect(embeddings.requests.length).toBeGreaterThanOrEqual(2);
  });
});

describe("resolveEmbeddingModel", () => {
  const config = (env: Record<string, string>) =>
    loadConfig({ cwd: tempDir(), env: { DIMSUM_HOME: tempDir(), ...env } });

  it("is undefined without DIMSUM_EMBEDDING_MODEL", () => {
    expect(resolveEmbeddingModel(config({}))).toBeUndefined();
  });

  it("resolves OpenAI, Gemini and Ollama models with their base URLs and keys", () => {
    expect(
      resolveEmbeddingModel(
        config({ DIMSUM_EMBEDDING_MODEL: "openai:text-embedding-3-small", OPENAI_API_KEY: "k" }),
      ),
    ).toMatchObject({ provider: "openai", id: "text-embedding-3-small", protocol: "openai", apiKey: "k" });
    expect(
      resolveEmbeddingModel(
        config({ DIMSUM_EMBEDDING_MODEL: "gemini:text-embedding-004", GEMINI_API_KEY: "g" }),
      ),
    ).toMatchObject({ protocol: "gemini", baseUrl: "https://generativelanguage.googleapis.com" });
    expect(
      resolveEmbeddingModel(config({ DIMSUM_EMBEDDING_MODEL: "ollama:nomic-embed-text" })),
    ).toMatchObject({
      protocol: "openai",
      baseUrl: expect.stringMatching(/\/v1$/),
    });
  });

  it("refuses providers without an embeddings API", () => {
    expect(() =>
      resolveEmbeddingModel(config({ DIMSUM_EMBEDDING_MODEL: "anthropic:claude-x", ANTHROPIC_API_KEY: "a" })),
    ).toThrow(/anthropic offers no embeddings API/);
  });
});
