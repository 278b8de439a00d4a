import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type KbCommandOptions, kbCommand } from "../../src/cli/commands/kb.js";
import {
  type FakeEmbeddingsServer,
  startFakeEmbeddingsServer,
} from "../../src/testing/fake-embeddings-server.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { minimalPdf, tempDir, writeFiles } from "./helpers.js";

let embeddings: FakeEmbeddingsServer;
let llm: FakeLlmServer;
beforeAll(async () => {
  embeddings = await startFakeEmbeddingsServer();
  llm = await startFakeLlmServer({ strict: true });
});
afterAll(async () => {
  await embeddings.close();
  await llm.close();
});
beforeEach(() => llm.reset());

function cli(env: Record<string, string> = {}, tty = false) {
  const home = tempDir();
  const cwd = tempDir();
  const io = { out: "", err: "" };
  let signal: AbortSignal | undefined;
  let onErr: ((text: string) => void) | undefined;
  const streams = {
    stdout: { write: (s: string) => (io.out += s) },
    stderr: {
      isTTY: tty,
      columns: 200,
      write: (s: string) => {
        io.err += s;
        onErr?.(s);
      },
    },
    env: { DIMSUM_HOME: home, ...env },
    cwd,
    get signal() {
      return signal;
    },
  };
  const run = async (action: string, args: string[], options: KbCommandOptions = {}) => {
    io.out = "";
    io.err = "";
    const code = await kbCommand(action, args, options, streams);
    return { code, out: io.out, err: io.err };
  };
  const cancelWhen = (predicate: (text: string) => boolean) => {
    const controller = new AbortController();
    signal = controller.signal;
    onErr = (text) => {
      if (predicate(text)) controller.abort();
    };
  };
  return { run, cwd, cancelWhen };
}

describe("dimsum kb", () => {
  it("adds a folder with progress lines, then lists, searches, removes and reports status", async () => {
    const { run, cwd } = cli();
    writeFiles(cwd, {
      "docs/a.md": "# Flaps\n\nFlaps increase lift at low speed.",
      "docs/b.txt": "Slats delay the stall.",
      "docs/m.pdf": minimalPdf([["Spoilers dump lift after touchdown."]], "Spoiler Manual"),
      "docs/bad.pdf": "%PDF-1.4 broken",
      "docs/SOUL.md": "persona",
      "docs/logo.png": "png",
    });
    const add = await run("add", ["manuals", "docs"]);
    expect(add.code).toBe(1);
    expect(add.err).toContain("adding to manuals: 0/4 files (0%)");
    expect(add.err).toMatch(/adding to manuals: 4\/4 files \(100%\)/);
    expect(add.out).toMatch(
      /^manuals: 3 added, 0 updated, 0 unchanged, 1 failed, 2 skipped \(.* in \d+\.\d s\)\n/,
    );
    expect(add.out).toContain("bad.pdf is not a readable PDF");
    expect(add.out).toContain("skipped: ");
    expect(add.out).toContain("SOUL.md: persona file: never indexed");
    expect(add.out).toContain("1 files of unsupported types were left out");

    const again = await run("add", ["manuals", "docs/a.md"]);
    expect(again).toMatchObject({ code: 0 });
    expect(again.out).toMatch(/^manuals: 0 added, 0 updated, 1 unchanged/);

    const bases = await run("list", []);
    expect(bases.out).toMatch(/^manuals\s+shared\s+4 docs\s+3 chunks\n/);
    expect(bases.out).toContain("retrieval: BM25 only: no embedding model is configured");
    const docs = await run("list", ["manuals"]);
    expect(docs.out).toMatch(
      /#\d+ {2}application\/pdf .* 1 pages {2}1 chunks {2}Spoiler Manual — .*m\.pdf\n/,
    );
    expect(docs.out).toContain("FAILED: ");

    const search = await run("search", ["manuals", "what", "dumps", "lift?"]);
    expect(search.code).toBe(0);
    expect(search.out).toMatch(
      /^mode: bm25\n\[1\] Spoiler Manual — .*m\.pdf, p\. 1, chunk \d+ {2}\(score 0\.\d{4}\)\n {4}Spoilers dump lift/,
    );
    const json = JSON.parse((await run("search", ["manuals", "slats"], { json: true })).out);
    expect(json.passages[0].citation.title).toBe("b.txt");

    expect((await run("remove", ["manuals", "b.txt"])).out).toMatch(/^removed #\d+ .*b\.txt\n$/);
    expect((await run("remove", ["manuals", "b.txt"])).code).toBe(1);
    expect((await run("status", [])).out).toBe(
      "BM25 only: no embedding model is configured (set DIMSUM_EMBEDDING_MODEL for hybrid retrieval)\n1 base, 3 documents, 2 chunks\n",
    );
    expect((await run("remove", ["manuals"])).out).toBe("removed knowledge base manuals (3 documents)\n");
    expect((await run("search", ["manuals", "lift"])).code).toBe(3);
  });

  it("draws a progress bar on a terminal and stops on cancel with exit code 130", async () => {
    const { run, cwd, cancelWhen } = cli({}, true);
    const files: Record<string, string> = {};
    for (let i = 0; i < 5; i++) files[`f/${i}.txt`] = `text number ${i}`;
    writeFiles(cwd, files);
    // Small files are written in batches, so the bar may still read 0/5 while the third file is read.
    cancelWhen((text) => text.includes("3.txt"));
    const add = await run("add", ["kb", "f"]);
    expect(add.err).toContain("\r\x1b[2Kadding to kb ");
    expect(add.err).toMatch(/adding to kb [█░]{24} \d\/5 files {2}\d+ B \/ 65 B {2}3\.txt/);
    expect(add.code).toBe(130);
    expect(add.out).toMatch(/^kb: [0-3] added, .* cancelled, files finished before that stay indexed\n/);
    const list = await run("list", ["kb"]);
    expect(list.out.trim().split("\n").length).toBeLessThan(5);
  });

  it("searches in hybrid mode with an embedding model, and reranks with --rerank", async () => {
    const { run, cwd } = cli({
      DIMSUM_EMBEDDING_MODEL: "openai:text-embedding-3-small",
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: `${embeddings.url}/v1`,
    });
    writeFiles(cwd, {
      "a.md": "# Pitot\n\nPitot tubes measure airspeed.",
      "b.md": "# Static\n\nStatic ports measure pressure.",
    });
    expect((await run("add", ["kb", "."])).code).toBe(0);
    const hybrid = await run("search", ["kb", "airspeed"]);
    expect(hybrid.out).toMatch(/^mode: hybrid\n\[1\] Pitot — /);
    expect((await run("status", [])).out).toMatch(/^hybrid \(BM25 \+ openai:text-embedding-3-small\)\n/);

    const ranked = cli({
      DIMSUM_MODEL: "openai:gpt-test",
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: `${llm.url}/v1`,
    });
    writeFiles(ranked.cwd, {
      "a.md": "# Pitot\n\nPitot tubes measure airspeed.",
      "b.md": "# Static\n\nairspeed needs static pressure too.",
    });
    await ranked.run("add", ["kb", "."]);
    llm.enqueue({ text: '{"scores":[{"id":"P1","score":1},{"id":"P2","score":8}]}' });
    const plain = await ranked.run("search", ["kb", "airspeed"]);
    const reranked = await ranked.run("search", ["kb", "airspeed"], { rerank: true });
    expect(reranked.out).toMatch(/^mode: bm25 \+ rerank\n/);
    const first = (text: string) => /\[1\] (\w+)/.exec(text)?.[1];
    const second = (text: string) => /\[2\] (\w+)/.exec(text)?.[1];
    expect(first(reranked.out)).toBe(second(plain.out));
    expect(llm.requests).toHaveLength(1);
  });

  it("reports usage errors with exit code 2", async () => {
    const { run } = cli();
    expect(await run("purge", [])).toMatchObject({
      code: 2,
      err: expect.stringContaining('unknown kb action "purge"'),
    });
    expect((await run("add", ["kb"])).err).toContain("kb add needs files or folders to add");
    expect((await run("search", ["kb"])).code).toBe(2);
    expect((await run("reindex", [])).code).toBe(2);
    expect((await run("add", ["kb", "missing-folder"])).err).toBe(
      "error: no such file or folder: missing-folder (check the path)\n",
    );
  });
});
