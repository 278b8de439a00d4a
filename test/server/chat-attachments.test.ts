/**
 * Files in chats: uploaded once by content, sent with a message, read by the agent's model as an
 * image, and served only to people who may read the chat (everyone else gets 404).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { AgentRecord, AttachmentView, ChannelRecord, PostResult } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { pdfDocument, pngImage } from "../support/attachment-files.js";
import { AgentScripts } from "../team/harness.js";
import { call, type Session, withUsers } from "./helpers.js";
import { expectJson, startTeamServer } from "./team-helpers.js";

let llm: FakeLlmServer;
const scripts = new AgentScripts();
beforeAll(async () => {
  llm = await startFakeLlmServer({ defaultTurn: scripts.turn });
});
afterAll(async () => {
  await llm.close();
});
beforeEach(() => {
  llm.reset();
  scripts.clear();
});

function upload(url: string, session: Session, channelId: string, name: string, data: Buffer) {
  return fetch(`${url}/api/channels/${channelId}/attachments?name=${encodeURIComponent(name)}`, {
    method: "POST",
    headers: {
      cookie: session.cookie,
      "x-csrf-token": session.csrfToken,
      "content-type": "application/octet-stream",
    },
    body: new Uint8Array(data),
  });
}

describe("chat attachments", () => {
  it("stores a file once, sends it to the agent with the message, and serves it only to the chat's readers", async () => {
    const s = await startTeamServer({ llmUrl: llm.url });
    const { owner, users } = await withUsers(s.url, ["member"]);
    const channel = await expectJson<ChannelRecord>(
      await call(s.url, "/api/channels", {
        session: owner,
        body: { kind: "group", name: "Photos", agentIds: ["assistant"], userIds: [] },
      }),
      201,
    );
    const png = pngImage(20, 10);
    const meta = await expectJson<AttachmentView>(
      await upload(s.url, owner, channel.id, "photo.png", png),
      201,
    );
    expect(meta).toMatchObject({ name: "photo.png", mimeType: "image/png", kind: "image", size: png.length });
    expect(meta.id).toMatch(/^[0-9a-f]{64}$/);
    const again = await expectJson<AttachmentView>(
      await upload(s.url, owner, channel.id, "same.png", png),
      201,
    );
    expect(again.id).toBe(meta.id);
    // The same bytes under a new name: stored once, known by the newest name.
    expect(again.name).toBe("same.png");
    const stored = s.db.prepare("SELECT count(*) AS n FROM attachments").get() as { n: number };
    expect(stored.n).toBe(1);

    scripts.add("assistant", { text: "A red rectangle." });
    const posted = await expectJson<PostResult>(
      await call(s.url, `/api/channels/${channel.id}/messages`, {
        session: owner,
        body: { text: "@assistant what is this?", attachments: [meta.id] },
      }),
      201,
    );
    expect(posted.message.parts).toContainEqual({ type: "attachment", ...again });
    await expect.poll(() => llm.requests.length, { timeout: 10_000 }).toBeGreaterThan(0);
    const sent = llm.requests[0]?.body as { messages: Array<{ role: string; content: unknown }> };
    const user = sent.messages.filter((m) => m.role === "user").at(-1)?.content as Array<{
      type: string;
      image_url?: { url: string };
    }>;
    expect(user.find((p) => p.type === "image_url")?.image_url?.url).toBe(
      `data:image/png;base64,${png.toString("base64")}`,
    );

    // Editing the text keeps the file: the answer to the edited message sees the image again.
    await expect.poll(() => llm.requests.length, { timeout: 10_000 }).toBe(1);
    scripts.add("assistant", { text: "A red rectangle, twice as wide as tall." });
    const edited = await expectJson<{ message: { parts: unknown[] } }>(
      await call(s.url, `/api/messages/${posted.message.id}`, {
        method: "PATCH",
        session: owner,
        body: { text: "@assistant what shape is this?" },
      }),
      200,
    );
    expect(edited.message.parts).toEqual([
      { type: "text", text: "@assistant what shape is this?" },
      { type: "attachment", ...again },
    ]);
    await expect.poll(() => llm.requests.length, { timeout: 10_000 }).toBe(2);
    const resent = llm.requests[1]?.body as { messages: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(resent.messages.filter((m) => m.role === "user").at(-1)?.content)).toContain(
      png.toString("base64"),
    );

    const file = await call(s.url, `/api/channels/${channel.id}/attachments/${meta.id}`, { session: owner });
    expect(file.status).toBe(200);
    expect(file.headers.get("content-type")).toBe("image/png");
    expect(Buffer.from(await file.arrayBuffer()).equals(png)).toBe(true);
    // Opened in a tab of its own, a file runs nothing (a sandboxed document without scripts).
    expect(file.headers.get("content-security-policy")).toMatch(/^sandbox; default-src 'none'/);
    // A PDF too opens inline in a sandboxed document (Chromium's viewer renders it there when the
    // file is opened in a tab of its own, as the chat's file chips do).
    const pdf = await expectJson<AttachmentView>(
      await upload(s.url, owner, channel.id, "contract.pdf", pdfDocument("Terms")),
      201,
    );
    const pdfFile = await call(s.url, `/api/channels/${channel.id}/attachments/${pdf.id}`, {
      session: owner,
    });
    expect(pdfFile.headers.get("content-type")).toBe("application/pdf");
    expect(pdfFile.headers.get("content-disposition")).toMatch(/^inline;/);
    expect(pdfFile.headers.get("content-security-policy")).toMatch(/^sandbox; default-src 'none'/);

    // Not a member of the chat: the file does not exist for them, nor does an unknown id for anyone.
    const outsider = await call(s.url, `/api/channels/${channel.id}/attachments/${meta.id}`, {
      session: users.member!,
    });
    expect(outsider.status).toBe(404);
    const unknown = await call(s.url, `/api/channels/${channel.id}/attachments/${"0".repeat(64)}`, {
      session: owner,
    });
    expect(unknown.status).toBe(404);
    // A file of another chat cannot be sent in this one.
    const other = await expectJson<ChannelRecord>(
      await call(s.url, "/api/channels", {
        session: owner,
        body: { kind: "group", name: "Other", agentIds: ["assistant"], userIds: [] },
      }),
      201,
    );
    const elsewhere = await call(s.url, `/api/channels/${other.id}/messages`, {
      session: owner,
      body: { text: "look", attachments: [meta.id] },
    });
    expect(elsewhere.status).toBe(400);
  });

  it("refuses files it cannot take with a clear error", async () => {
    const s = await startTeamServer({ llmUrl: llm.url });
    const { owner } = await withUsers(s.url, []);
    const channel = await expectJson<ChannelRecord>(
      await call(s.url, "/api/channels", {
        session: owner,
        body: { kind: "group", name: "Files", agentIds: ["assistant"], userIds: [] },
      }),
      201,
    );
    const binary = await upload(s.url, owner, channel.id, "x.bin", Buffer.from([0, 1, 2, 0, 255]));
    expect(binary.status).toBe(400);
    expect(((await binary.json()) as { error: { message: string } }).error.message).toContain(
      "not a file Dimsum can attach",
    );
    const pdf = await expectJson<AttachmentView>(
      await upload(s.url, owner, channel.id, "a.pdf", pdfDocument("hi")),
      201,
    );
    expect(pdf.kind).toBe("pdf");
  });

  it("tells clients the limits and which agents' models cannot read images", async () => {
    const s = await startTeamServer({ llmUrl: llm.url });
    const { owner, users } = await withUsers(s.url, ["guest"]);
    // Everyone signed in may read the limits (the composer checks before uploading).
    const limits = await expectJson(
      await call(s.url, "/api/attachments/limits", { session: users.guest! }),
      200,
    );
    expect(limits).toEqual({
      imageBytes: 10 * 1024 * 1024,
      pdfBytes: 20 * 1024 * 1024,
      textBytes: 2 * 1024 * 1024,
      filesPerMessage: 10,
    });
    expect((await call(s.url, "/api/attachments/limits")).status).toBe(401);
    // deepseek-chat is catalogued as text only; gpt-4o reads both; gpt-test is unknown (no field).
    await expectJson(
      await call(s.url, "/api/agents", {
        session: owner,
        body: { id: "texty", name: "Texty", model: "openai:deepseek-chat" },
      }),
      201,
    );
    await call(s.url, "/api/agents/assistant", {
      method: "PATCH",
      session: owner,
      body: { model: "openai:gpt-4o" },
    });
    const agents = await expectJson<AgentRecord[]>(await call(s.url, "/api/agents", { session: owner }), 200);
    const byId = new Map(agents.map((a) => [a.id, a]));
    expect(byId.get("texty")?.modelInput).toEqual({
      model: "openai:deepseek-chat",
      images: false,
      pdf: false,
    });
    expect(byId.get("assistant")?.modelInput).toEqual({ model: "openai:gpt-4o", images: true, pdf: true });
    expect(byId.get("writer")?.modelInput).toBeUndefined();
    const one = await expectJson<AgentRecord>(
      await call(s.url, "/api/agents/texty", { session: owner }),
      200,
    );
    expect(one.modelInput?.images).toBe(false);
  });
});
