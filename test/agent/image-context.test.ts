/**
 * Images over many turns of a stored session, against the fake LLM: only the images of the last
 * `keepImagesTurns` person turns go as images (older ones become a placeholder naming the file),
 * token estimates count images by their pixel size, and compaction keeps an image with its message.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { estimateMessageTokens } from "../../src/agent/context/index.js";
import type { AgentEvent } from "../../src/agent/events.js";
import { runSessionTurn, type SessionTurnOptions } from "../../src/agent/session-runner.js";
import type { UserContentPart } from "../../src/llm/types.js";
import { openDatabase } from "../../src/store/database.js";
import { SqliteSessionStore } from "../../src/store/sqlite-session-store.js";
import type { SessionRef } from "../../src/store/types.js";
import {
  type FakeLlmServer,
  type RecordedRequest,
  startFakeLlmServer,
} from "../../src/testing/fake-llm-server.js";
import { defaultToolsConfig } from "../../src/tools/builtin/defaults.js";
import { createBuiltinRegistry } from "../../src/tools/builtin/index.js";
import { pngImage } from "../support/attachment-files.js";
import { fakeModel, fastRetry } from "../support/fake-models.js";

let server: FakeLlmServer;
let store: SqliteSessionStore;
let close: () => void;

beforeAll(async () => {
  server = await startFakeLlmServer({ strict: true });
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.reset();
  const db = openDatabase(join(mkdtempSync(join(tmpdir(), "dimsum-images-")), "dimsum.db"));
  store = new SqliteSessionStore(db);
  close = () => db.close();
});
afterEach(() => close());

async function turn(ref: SessionRef, input: UserContentPart[], overrides: Partial<SessionTurnOptions> = {}) {
  const events: AgentEvent[] = [];
  for await (const event of runSessionTurn({
    store,
    ref,
    model: fakeModel(server, "openai"),
    input,
    tools: createBuiltinRegistry([]),
    toolEnvironment: { workspace: process.cwd(), config: defaultToolsConfig() },
    streamOptions: fastRetry,
    ...overrides,
  })) {
    events.push(event);
  }
  return events;
}

/** Turn `i`'s message: its text and a photo named after it (each a different colour, so different bytes). */
function photoTurn(i: number, text = `Turn ${i}: what is in photo ${i}?`): UserContentPart[] {
  const png = pngImage(64, 48, [i * 40, 100, 200 - i * 30]);
  return [
    { type: "text", text },
    { type: "image", mimeType: "image/png", data: png.toString("base64"), name: `photo-${i}.png` },
  ];
}

type Part = { type: string; text?: string; image_url?: { url: string } };
type OpenAiMessage = { role: string; content?: string | Part[] };

const userMessages = (request: RecordedRequest | undefined) =>
  ((request?.body as { messages?: OpenAiMessage[] } | undefined)?.messages ?? []).filter(
    (m) => m.role === "user",
  );

/** Per user message of a request: its text and what became of its image (`image` or the placeholder). */
function shape(request: RecordedRequest | undefined): Array<{ text: string; image?: string }> {
  return userMessages(request).map((m) => {
    const parts = typeof m.content === "string" ? [{ type: "text", text: m.content }] : (m.content ?? []);
    // Adjacent text parts may arrive joined: the placeholder is found inside the text.
    const text = parts
      .filter((p) => p.type === "text")
      .map((p) => p.text ?? "")
      .join("\n");
    const placeholder = /\[image [^\]]* left out: [^\]]*\]/.exec(text)?.[0];
    const image = parts.some((p) => p.type === "image_url") ? "image" : placeholder;
    return { text: text.replace(placeholder ?? "\u0000", "").trim(), ...(image ? { image } : {}) };
  });
}

describe("images in a long conversation", () => {
  it("sends the images of the last 3 person turns and a placeholder naming the file for older ones", async () => {
    const ref = { userId: "A", sessionId: "photos" };
    for (let i = 1; i <= 5; i++) {
      server.enqueue({ text: `photo ${i} shows a rectangle` });
      expect((await turn(ref, photoTurn(i))).at(-1)?.type).toBe("done");
    }
    expect(shape(server.requests.at(-1))).toEqual([
      {
        text: expect.stringContaining("Turn 1:"),
        image: "[image photo-1.png left out: older than the last turns]",
      },
      {
        text: expect.stringContaining("Turn 2:"),
        image: "[image photo-2.png left out: older than the last turns]",
      },
      { text: expect.stringContaining("Turn 3:"), image: "image" },
      { text: expect.stringContaining("Turn 4:"), image: "image" },
      { text: expect.stringContaining("Turn 5:"), image: "image" },
    ]);
    // The fourth request (four turns) already left out only the first image.
    expect(shape(server.requests[3]).map((m) => m.image)).toEqual([
      "[image photo-1.png left out: older than the last turns]",
      "image",
      "image",
      "image",
    ]);
    // The stored conversation keeps every image.
    const stored = JSON.stringify(await store.loadMessages(ref));
    for (let i = 1; i <= 5; i++) expect(stored).toContain(`photo-${i}.png`);
    expect(stored).not.toContain("left out");

    // keepImagesTurns: 1 keeps only the newest.
    server.enqueue({ text: "ok" });
    await turn(ref, photoTurn(6), { keepImagesTurns: 1 });
    expect(shape(server.requests.at(-1)).map((m) => m.image === "image")).toEqual([
      false,
      false,
      false,
      false,
      false,
      true,
    ]);
  });

  it("counts an image by its pixel size in token estimates", () => {
    const message = (width: number, height: number) => ({
      role: "user" as const,
      content: [
        { type: "text" as const, text: "look" },
        {
          type: "image" as const,
          mimeType: "image/png",
          data: pngImage(width, height).toString("base64"),
        },
      ],
    });
    const textOnly = estimateMessageTokens({ role: "user", content: "look" });
    const small = estimateMessageTokens(message(32, 32));
    const large = estimateMessageTokens(message(1024, 1024));
    expect(small).toBeGreaterThan(textOnly);
    expect(large).toBeGreaterThan(small + 500);
  });

  it("compacts a conversation of photos without ever separating an image from its message", async () => {
    const ref = { userId: "A", sessionId: "compact" };
    const model = fakeModel(server, "openai", { contextWindow: 6_000, maxOutputTokens: 400 });
    const isSummary = (r: RecordedRequest) => JSON.stringify(r.body).includes("running summary");
    const requests: RecordedRequest[] = [];
    for (let i = 1; i <= 10; i++) {
      const long = `Turn ${i}: ${"a long description of the garden and its paths. ".repeat(60)}`;
      server.enqueue(
        (r) =>
          isSummary(r) ? { text: `Summary: ${i - 1} photos so far.` } : { text: `photo ${i}: a garden` },
        (r) =>
          isSummary(r) ? { text: `Summary: ${i - 1} photos so far.` } : { text: `photo ${i}: a garden` },
      );
      expect((await turn(ref, photoTurn(i, long), { model })).at(-1)?.type).toBe("done");
      requests.push(...server.requests);
      server.reset();
    }
    expect(requests.some(isSummary)).toBe(true);
    const answers = requests.filter((r) => !isSummary(r));
    // Later requests lost the first turns to compaction.
    expect(shape(answers.at(-1)).length).toBeLessThan(10);
    for (const request of answers) {
      for (const message of shape(request)) {
        // Every person message that reached the model has its text and its own image (or its placeholder).
        const turnNumber = /^Turn (\d+):/.exec(message.text)?.[1];
        expect(turnNumber).toBeDefined();
        expect([`image`, `[image photo-${turnNumber}.png left out: older than the last turns]`]).toContain(
          message.image,
        );
      }
    }
    // The summariser reads images as their names, never as data.
    for (const request of requests.filter(isSummary)) {
      expect(JSON.stringify(request.body)).not.toContain("data:image/png");
    }
  });
});
