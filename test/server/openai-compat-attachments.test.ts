/**
 * `/v1/chat/completions` with images and files, as the official `openai` SDK sends them: an
 * `image_url` data URL reaches the agent's model as an image; a `file` part (a PDF) as a document, or
 * as its text where the model does not read PDFs; an http(s) image URL goes through the SSRF guard.
 */

import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { pdfDocument, pngImage } from "../support/attachment-files.js";
import { AgentScripts } from "../team/harness.js";
import { call, withUsers } from "./helpers.js";
import { expectJson, startTeamServer, type TeamServerOptions } from "./team-helpers.js";

let llm: FakeLlmServer;
let images: Server;
let imagesUrl: string;
const scripts = new AgentScripts();
const png = pngImage(16, 9);

beforeAll(async () => {
  llm = await startFakeLlmServer({ defaultTurn: scripts.turn });
  images = createServer((req, res) => {
    if (req.url === "/photo.png") {
      res.writeHead(200, { "content-type": "image/png" });
      res.end(png);
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => images.listen(0, "127.0.0.1", resolve));
  const address = images.address();
  imagesUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
});
afterAll(async () => {
  await llm.close();
  await new Promise((resolve) => images.close(resolve));
});
beforeEach(() => {
  llm.reset();
  scripts.clear();
});

async function setUp(options: TeamServerOptions = {}) {
  const s = await startTeamServer({ llmUrl: llm.url, ...options });
  const { owner } = await withUsers(s.url, []);
  const { token } = await expectJson<{ token: string }>(
    await call(s.url, "/api/tokens", { session: owner, body: { name: "sdk" } }),
    201,
  );
  return { s, client: new OpenAI({ baseURL: `${s.url}/v1`, apiKey: token, maxRetries: 0 }) };
}

type Sent = { messages: Array<{ role: string; content: unknown }> };
const lastUserContent = (index = 0): unknown =>
  (llm.requests[index]?.body as Sent | undefined)?.messages.filter((m) => m.role === "user").at(-1)?.content;

describe("/v1/chat/completions with attachments", () => {
  it("the openai SDK sends an image_url data URL and gets the answer", async () => {
    const { client } = await setUp();
    scripts.add("writer", { text: "A small red picture." });
    const data = `data:image/png;base64,${png.toString("base64")}`;
    const completion = await client.chat.completions.create({
      model: "writer",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "what is this?" },
            { type: "image_url", image_url: { url: data } },
          ],
        },
      ],
    });
    expect(completion.choices[0]?.message.content).toBe("A small red picture.");
    const content = lastUserContent() as Array<{ type: string; text?: string; image_url?: { url: string } }>;
    expect(content.find((p) => p.type === "image_url")?.image_url?.url).toBe(data);
    expect(content.some((p) => p.type === "text" && p.text?.includes("what is this?"))).toBe(true);
  });

  it("streams with the SDK too", async () => {
    const { client } = await setUp();
    scripts.add("writer", { text: "Red." });
    const stream = await client.chat.completions.create({
      model: "writer",
      stream: true,
      messages: [
        {
          role: "user",
          content: [
            { type: "image_url", image_url: { url: `data:image/png;base64,${png.toString("base64")}` } },
          ],
        },
      ],
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("Red.");
  });

  it("takes a file part (a PDF as file_data); a model that does not read PDFs gets its text", async () => {
    const { client } = await setUp();
    scripts.add("writer", { text: "1200 euros." });
    const pdf = pdfDocument("The rent is 1200 euros");
    const completion = await client.chat.completions.create({
      model: "writer",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "how much is the rent?" },
            {
              type: "file",
              file: {
                filename: "lease.pdf",
                file_data: `data:application/pdf;base64,${pdf.toString("base64")}`,
              },
            },
          ],
        },
      ],
    });
    expect(completion.choices[0]?.message.content).toBe("1200 euros.");
    // The fake agents use openai:gpt-test, which the catalogue does not know: PDFs go as text.
    expect(JSON.stringify(lastUserContent())).toContain("The rent is 1200 euros");
    expect(JSON.stringify(lastUserContent())).toContain('<file name=\\"lease.pdf\\"');
  });

  it("fetches http(s) image URLs only through the SSRF guard", async () => {
    const { client } = await setUp();
    const error = await client.chat.completions
      .create({
        model: "writer",
        messages: [
          { role: "user", content: [{ type: "image_url", image_url: { url: `${imagesUrl}/photo.png` } }] },
        ],
      })
      .then(
        () => undefined,
        (err: unknown) => err as { status: number; message: string },
      );
    expect(error?.status).toBe(400);
    expect(error?.message).toContain("not a public one");
    expect(llm.requests).toHaveLength(0);

    const dir = mkdtempSync(join(tmpdir(), "v1-config-"));
    writeFileSync(
      join(dir, "config.json"),
      JSON.stringify({ tools: { fetch: { allowPrivateNetwork: true } } }),
    );
    const open = await setUp({ env: { DIMSUM_CONFIG: join(dir, "config.json") } });
    scripts.add("writer", { text: "fetched" });
    const completion = await open.client.chat.completions.create({
      model: "writer",
      messages: [
        { role: "user", content: [{ type: "image_url", image_url: { url: `${imagesUrl}/photo.png` } }] },
      ],
    });
    expect(completion.choices[0]?.message.content).toBe("fetched");
    expect(JSON.stringify(lastUserContent())).toContain(png.toString("base64"));
  });

  it("refuses what it cannot take with OpenAI-shaped 4xx errors", async () => {
    const { client } = await setUp();
    const refused = async (content: OpenAI.Chat.ChatCompletionContentPart[]) =>
      client.chat.completions.create({ model: "writer", messages: [{ role: "user", content }] }).then(
        () => undefined,
        (err: unknown) => err as { status: number; message: string },
      );
    const notImage = await refused([
      {
        type: "image_url",
        image_url: { url: `data:image/png;base64,${Buffer.from("hello").toString("base64")}` },
      },
    ]);
    expect(notImage?.status).toBe(400);
    expect(notImage?.message).toContain("not an image");
    const byId = await refused([{ type: "file", file: { file_id: "file-123" } }]);
    expect(byId?.status).toBe(400);
    expect(byId?.message).toContain("file_id is not supported");
    const many = await refused(
      Array.from({ length: 11 }, () => ({
        type: "image_url" as const,
        image_url: { url: `data:image/png;base64,${png.toString("base64")}` },
      })),
    );
    expect(many?.status).toBe(413);
    expect(llm.requests).toHaveLength(0);
  });
});
