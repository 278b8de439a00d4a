/**
 * `dimsum run --attach` and `dimsum chat --attach` / `/attach` against the fake LLM: each protocol
 * gets the file in its own wire form; a PDF goes as a document to a model that reads PDFs and as its
 * text to one that does not; an image to a text-only model is refused before anything is sent.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { pdfDocument, pngImage } from "../support/attachment-files.js";
import { cleanEnv, runCli } from "../support/cli.js";

let server: FakeLlmServer;
let dir: string;
const png = pngImage(8, 6);
const pdf = pdfDocument("The rent is 1200 euros a month");

beforeAll(async () => {
  server = await startFakeLlmServer({ strict: true });
  dir = mkdtempSync(join(tmpdir(), "attach-"));
  writeFileSync(join(dir, "photo.png"), png);
  writeFileSync(join(dir, "contract.pdf"), pdf);
  writeFileSync(join(dir, "notes.md"), "# Notes\n\n- buy milk\n");
  writeFileSync(join(dir, "blob.bin"), Buffer.from([0, 1, 2, 3, 0, 255, 254]));
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => server.reset());

const env = {
  openai: () => cleanEnv({ OPENAI_API_KEY: "k", OPENAI_BASE_URL: `${server.url}/v1` }),
  anthropic: () => cleanEnv({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.url }),
  gemini: () => cleanEnv({ GEMINI_API_KEY: "k", GEMINI_BASE_URL: server.url }),
  deepseek: () => cleanEnv({ DEEPSEEK_API_KEY: "k", DEEPSEEK_BASE_URL: `${server.url}/v1` }),
};

async function run(model: string, envFor: () => Record<string, string | undefined>, ...files: string[]) {
  const args = ["run", "--model", model, "--tools", "calculator"];
  for (const file of files) args.push("--attach", file);
  args.push("what is this?");
  return runCli(args, { env: envFor(), cwd: dir });
}

type Body = Record<string, unknown>;
const lastUser = (body: Body): unknown => {
  const messages = body.messages as Array<{ role: string; content: unknown }>;
  return messages.filter((m) => m.role === "user").at(-1)?.content;
};

describe("dimsum run --attach", () => {
  it("sends an image as an OpenAI image_url part", async () => {
    server.enqueue({ text: "a red square" });
    const result = await run("openai:gpt-4o", env.openai, "photo.png");
    expect(result.stderr).not.toContain("error");
    expect(result.stdout).toBe("a red square\n");
    expect(lastUser(server.requests[0]?.body as Body)).toEqual([
      { type: "text", text: "what is this?" },
      { type: "image_url", image_url: { url: `data:image/png;base64,${png.toString("base64")}` } },
    ]);
  });

  it("sends an image as an Anthropic image block", async () => {
    server.enqueue({ text: "a red square" });
    const result = await run("anthropic:claude-sonnet-4-5", env.anthropic, "photo.png");
    expect(result.code).toBe(0);
    // The last block may carry the prompt cache's breakpoint (`cache_control`) too.
    expect(lastUser(server.requests[0]?.body as Body)).toMatchObject([
      { type: "text", text: "what is this?" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: png.toString("base64") } },
    ]);
  });

  it("sends an image as Gemini inlineData", async () => {
    server.enqueue({ text: "a red square" });
    const result = await run("gemini:gemini-2.5-flash", env.gemini, "photo.png");
    expect(result.code).toBe(0);
    const contents = (server.requests[0]?.body as Body | undefined)?.contents as Array<{
      role: string;
      parts: unknown[];
    }>;
    expect(contents.at(-1)?.parts).toEqual([
      { text: "what is this?" },
      { inlineData: { mimeType: "image/png", data: png.toString("base64") } },
    ]);
  });

  it("sends a PDF as each protocol's document part to models that read PDFs", async () => {
    const data = pdf.toString("base64");
    server.enqueue({ text: "ok" }, { text: "ok" }, { text: "ok" });
    expect((await run("openai:gpt-4o", env.openai, "contract.pdf")).code).toBe(0);
    expect((await run("anthropic:claude-sonnet-4-5", env.anthropic, "contract.pdf")).code).toBe(0);
    expect((await run("gemini:gemini-2.5-flash", env.gemini, "contract.pdf")).code).toBe(0);
    const [openai, anthropic, gemini] = server.requests.map((r) => r.body as Body);
    expect(lastUser(openai as Body)).toContainEqual({
      type: "file",
      file: { filename: "contract.pdf", file_data: `data:application/pdf;base64,${data}` },
    });
    expect(lastUser(anthropic as Body)).toContainEqual(
      expect.objectContaining({
        type: "document",
        source: { type: "base64", media_type: "application/pdf", data },
        title: "contract.pdf",
      }),
    );
    const contents = (gemini as Body).contents as Array<{ parts: unknown[] }>;
    expect(contents.at(-1)?.parts).toContainEqual({ inlineData: { mimeType: "application/pdf", data } });
  });

  it("sends a PDF as its extracted text to a model that does not read PDFs", async () => {
    server.enqueue({ text: "1200 euros" });
    const result = await run("deepseek:deepseek-chat", env.deepseek, "contract.pdf");
    expect(result.stderr).not.toContain("error");
    expect(result.code).toBe(0);
    const content = lastUser(server.requests[0]?.body as Body);
    expect(typeof content).toBe("string");
    expect(content).toContain("what is this?");
    expect(content).toContain('<file name="contract.pdf" type="application/pdf">');
    expect(content).toContain("The rent is 1200 euros a month");
  });

  it("refuses an image for a text-only model before sending, naming a model that reads images", async () => {
    const result = await run("deepseek:deepseek-chat", env.deepseek, "photo.png");
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("deepseek:deepseek-chat cannot read images (photo.png)");
    expect(result.stderr).toContain("openai:gpt-4o");
    expect(server.requests).toHaveLength(0);
  });

  it("sends text files as fenced text to every model", async () => {
    server.enqueue({ text: "milk" });
    const result = await run("openai:gpt-4o", env.openai, "notes.md");
    expect(result.code).toBe(0);
    const content = lastUser(server.requests[0]?.body as Body);
    expect(content).toBe(
      'what is this?\n<file name="notes.md" type="text/markdown">\n# Notes\n\n- buy milk\n\n</file>',
    );
  });

  it("refuses files it cannot take and files over the limits, saying what to do", async () => {
    const binary = await run("openai:gpt-4o", env.openai, "blob.bin");
    expect(binary.code).not.toBe(0);
    expect(binary.stderr).toContain("blob.bin is not a file Dimsum can attach");
    expect(binary.stderr).toContain("PNG, JPEG, WebP or GIF");

    writeFileSync(
      join(dir, "dimsum.config.json"),
      JSON.stringify({ attachments: { maxImageMB: 0.00001, maxFiles: 2 } }),
    );
    try {
      const big = await run("openai:gpt-4o", env.openai, "photo.png");
      expect(big.stderr).toMatch(/photo\.png is .* MB; an image may be at most/);
      expect(big.stderr).toContain("attachments.maxImageMB");
      const many = await run("openai:gpt-4o", env.openai, "notes.md", "notes.md", "notes.md");
      expect(many.stderr).toContain("3 files attached; a message may carry at most 2");
    } finally {
      writeFileSync(join(dir, "dimsum.config.json"), "{}");
    }
    expect(server.requests).toHaveLength(0);
  });
});

describe("dimsum chat --attach and /attach", () => {
  it("sends --attach with the first message and /attach FILE with the next", async () => {
    server.enqueue({ text: "a square" }, { text: "a contract" }, { text: "plain" });
    const input = "what is this?\n/attach contract.pdf\nand this?\nno files now\n/exit\n";
    const result = await runCli(
      ["chat", "--model", "openai:gpt-4o", "--tools", "calculator", "--attach", "photo.png"],
      {
        env: env.openai(),
        cwd: dir,
        input,
      },
    );
    expect(result.stderr).not.toContain("dimsum:");
    expect(result.code).toBe(0);
    expect(result.stderr).toContain("attached photo.png (image/png");
    expect(result.stderr).toContain("attached contract.pdf (application/pdf");
    const [first, second, third] = server.requests.map((r) => lastUser(r.body as Body));
    expect(first).toContainEqual({
      type: "image_url",
      image_url: { url: `data:image/png;base64,${png.toString("base64")}` },
    });
    expect(second).toContainEqual(expect.objectContaining({ type: "file" }));
    expect(third).toBe("no files now");
  });
});
