/**
 * What the upload route refuses or cleans (issue 34, item 6): a file name's bidirectional controls
 * (U+202E shows "txt.exe" as "exe.txt"), an empty file, an edit that tries to change a message's
 * files; the same bytes under a new name keep the new name; and an upload over its kind's limit is
 * refused while it streams in, long before the request's whole body was read.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AttachmentView, ChannelRecord, PostResult } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { pngImage } from "../support/attachment-files.js";
import { call, type Session, withUsers } from "./helpers.js";
import { expectJson, startTeamServer } from "./team-helpers.js";

let llm: FakeLlmServer;
beforeAll(async () => {
  llm = await startFakeLlmServer({ defaultTurn: () => ({ text: "Noted." }) });
});
afterAll(async () => {
  await llm.close();
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

async function setUp() {
  // Images may be 1 MB here, so the streaming check is visible with a small body.
  const s = await startTeamServer({ llmUrl: llm.url, configFile: { attachments: { maxImageMB: 1 } } });
  const { owner } = await withUsers(s.url);
  const channel = await expectJson<ChannelRecord>(
    await call(s.url, "/api/channels", {
      session: owner,
      body: { kind: "group", name: "Files", agentIds: ["assistant"], userIds: [] },
    }),
    201,
  );
  return { s, owner, channel };
}

describe("upload checks", () => {
  it("cleans bidi controls from names, refuses empty files, keeps a new name for the same bytes", async () => {
    const { s, owner, channel } = await setUp();
    const tricky = await expectJson<AttachmentView>(
      await upload(s.url, owner, channel.id, "report\u202Etxt.exe\u2066", Buffer.from("plain words")),
      201,
    );
    expect(tricky.name).toBe("reporttxt.exe");
    expect(tricky.name).not.toMatch(/[\u202a-\u202e\u2066-\u2069\u200e\u200f]/);

    const empty = await upload(s.url, owner, channel.id, "notes.md", Buffer.alloc(0));
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as { error: { message: string } }).error.message).toContain("empty");
    expect(
      (s.db.prepare("SELECT count(*) AS n FROM attachments WHERE size = 0").get() as { n: number }).n,
    ).toBe(0);

    const png = pngImage(6, 6);
    const first = await expectJson<AttachmentView>(
      await upload(s.url, owner, channel.id, "first.png", png),
      201,
    );
    const second = await expectJson<AttachmentView>(
      await upload(s.url, owner, channel.id, "second.png", png),
      201,
    );
    expect(second.id).toBe(first.id);
    expect(second.name).toBe("second.png");
    const served = await fetch(`${s.url}/api/channels/${channel.id}/attachments/${second.id}`, {
      headers: { cookie: owner.cookie },
    });
    expect(served.headers.get("content-disposition")).toContain("second.png");
  }, 60_000);

  it("refuses an edit that carries attachments (400) instead of ignoring them", async () => {
    const { s, owner, channel } = await setUp();
    const file = await expectJson<AttachmentView>(
      await upload(s.url, owner, channel.id, "a.txt", Buffer.from("a file")),
      201,
    );
    const posted = await expectJson<PostResult>(
      await call(s.url, `/api/channels/${channel.id}/messages`, {
        session: owner,
        body: { text: "just a note" },
      }),
      201,
    );
    const edit = await call(s.url, `/api/messages/${posted.message.id}`, {
      session: owner,
      method: "PATCH",
      body: { text: "a note with a file", attachments: [file.id] },
    });
    expect(edit.status).toBe(400);
    expect(((await edit.json()) as { error: { message: string } }).error.message).toMatch(/files cannot be/);
    const plain = await call(s.url, `/api/messages/${posted.message.id}`, {
      session: owner,
      method: "PATCH",
      body: { text: "a changed note" },
    });
    expect(plain.status).toBe(200);
  }, 60_000);

  it("refuses an image over its limit while it streams in, not after reading the whole body", async () => {
    const { s, owner, channel } = await setUp();
    const total = 40 * 1024 * 1024;
    const piece = Buffer.alloc(64 * 1024);
    const { hostname, port } = new URL(s.url);
    let sent = 0;
    const result = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      let answered = false;
      const req = request(
        {
          host: hostname,
          port,
          method: "POST",
          path: `/api/channels/${channel.id}/attachments?name=big.png`,
          // No content-length: chunked, so only what arrives tells the size.
          headers: {
            cookie: owner.cookie,
            "x-csrf-token": owner.csrfToken,
            "content-type": "application/octet-stream",
          },
        },
        (res) => {
          answered = true;
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (d: string) => {
            body += d;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
          res.on("error", reject);
        },
      );
      req.on("error", (err) => {
        if (!answered) reject(err);
      });
      const write = async () => {
        req.write(pngImage(4, 4).subarray(0, 64));
        while (!answered && sent < total) {
          sent += piece.length;
          if (!req.write(piece)) await new Promise((r) => req.once("drain", r));
          // A turn of the event loop, so the answer is seen as soon as it comes.
          await new Promise((r) => setImmediate(r));
        }
        if (!answered) req.end();
      };
      void write().catch(() => undefined);
    });
    expect(result.status).toBe(413);
    expect(result.body).toContain("big.png");
    expect(result.body).toContain("at most 1 MB");
    // The refusal came while most of the 40 MB were still unsent.
    expect(sent).toBeLessThan(total / 4);
  }, 60_000);
});
