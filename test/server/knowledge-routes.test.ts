/** The `/api/kb` routes on a real server over real SQLite and a real KnowledgeService. */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { KnowledgeService } from "../../src/knowledge/index.js";
import type { DocumentRecord, IngestJobSnapshot, KnowledgeSearchResult } from "../../src/knowledge/types.js";
import { mountKnowledgeRoutes, safeUploadName } from "../../src/server/routes/knowledge.js";
import { type Database, openDatabase } from "../../src/store/database.js";
import { call, type Session, startServer, type TestServer, tempDir, withUsers } from "./helpers.js";

const MAX_FILE = 4096;
const opened: Database[] = [];

afterEach(() => {
  for (const db of opened.splice(0)) db.close();
});

interface Harness {
  srv: TestServer;
  service: KnowledgeService;
  owner: Session;
  member: Session;
}

async function start(): Promise<Harness> {
  const db = openDatabase(join(tempDir("dimsum-kb-routes-"), "kb.db"));
  opened.push(db);
  const service = KnowledgeService.sqlite(db);
  const srv = await startServer({
    routes: [mountKnowledgeRoutes(service, { maxFileBytes: MAX_FILE, maxFiles: 3 })],
  });
  const { owner, users } = await withUsers(srv.url, ["member"]);
  const member = users.member;
  if (!member) throw new Error("no member session");
  return { srv, service, owner, member };
}

function upload(
  srv: TestServer,
  session: Session | undefined,
  files: Array<{ name: string; text: string; type?: string }>,
  options: { noCsrf?: boolean; kb?: string } = {},
): Promise<Response> {
  const form = new FormData();
  for (const f of files) form.append("files", new Blob([f.text], { type: f.type ?? "text/plain" }), f.name);
  const headers: Record<string, string> = {};
  if (session) {
    headers.cookie = session.cookie;
    if (!options.noCsrf) headers["x-csrf-token"] = session.csrfToken;
  }
  return fetch(`${srv.url}/api/kb/${options.kb ?? "docs"}/upload`, { method: "POST", headers, body: form });
}

async function json<T>(res: Response, status: number): Promise<T> {
  const text = await res.text();
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

async function waitForJob(srv: TestServer, session: Session, jobId: string): Promise<IngestJobSnapshot> {
  for (;;) {
    const snap = await json<IngestJobSnapshot>(
      await call(srv.url, `/api/kb/jobs/${jobId}`, { session }),
      200,
    );
    if (snap.status !== "running") return snap;
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("knowledge base routes", () => {
  it("uploads files, runs the ingestion job to the end and finds a cited passage", async () => {
    const { srv, owner, member } = await start();
    await json(await call(srv.url, "/api/kb", { session: owner, body: { name: "docs" } }), 201);
    const started = await json<{ jobId: string; files: number }>(
      await upload(srv, owner, [
        {
          name: "install.md",
          text: "# Install\n\nRun the zanzibar installer to set up the quokka daemon.\n",
        },
        { name: "notes.txt", text: "Unrelated notes about gardening and tomatoes.\n" },
      ]),
      202,
    );
    expect(started.files).toBe(2);
    const job = await waitForJob(srv, owner, started.jobId);
    expect(job.status).toBe("done");
    expect(job.result?.added).toBe(2);

    const docs = await json<DocumentRecord[]>(
      await call(srv.url, "/api/kb/docs/documents", { session: member }),
      200,
    );
    expect(docs.map((d) => d.source).sort()).toEqual(["install.md", "notes.txt"]);

    const found = await json<KnowledgeSearchResult>(
      await call(srv.url, "/api/kb/docs/search?q=quokka%20daemon", { session: member }),
      200,
    );
    const top = found.passages[0];
    expect(top?.text).toContain("quokka daemon");
    expect(top?.citation.source).toBe("install.md");
    expect(top?.citation.kb).toBe("docs");

    const listed = await json<{
      status: { mode: string };
      bases: Array<{ name: string; documents: number }>;
      limits: { maxFileBytes: number; maxFiles: number };
    }>(await call(srv.url, "/api/kb", { session: member }), 200);
    expect(listed.status.mode).toBe("bm25");
    expect(listed.limits).toEqual({ maxFileBytes: MAX_FILE, maxFiles: 3 });
    expect(listed.bases).toEqual([expect.objectContaining({ name: "docs", documents: 2 })]);

    const install = docs.find((d) => d.source === "install.md");
    await json(
      await call(srv.url, `/api/kb/docs/documents/${install?.id}`, { session: member, method: "DELETE" }),
      403,
    );
    expect(
      (await call(srv.url, `/api/kb/docs/documents/${install?.id}`, { session: owner, method: "DELETE" }))
        .status,
    ).toBe(204);
    const after = await json<KnowledgeSearchResult>(
      await call(srv.url, "/api/kb/docs/search?q=quokka", { session: owner }),
      200,
    );
    expect(after.passages).toEqual([]);
    expect((await call(srv.url, "/api/kb/docs", { session: owner, method: "DELETE" })).status).toBe(204);
    await json(await call(srv.url, "/api/kb/docs/documents", { session: owner }), 404);
  });

  it("lets uploads past the API's 1 MiB body limit reach the route's own per-file check", async () => {
    const { srv, owner } = await start();
    const big = `# Big\n\n${"Aerofoil pressure distribution measurements. ".repeat(60_000)}\n`;
    expect(big.length).toBeGreaterThan(2 * 1024 * 1024);
    const res = await upload(srv, owner, [{ name: "big.md", text: big }]);
    // The route (not the global body limit) refused it, naming the file and its own limit.
    expect(res.status).toBe(413);
    expect(await res.text()).toMatch(/big\.md is 2\.\d MB, over the .* limit per file/);
  });

  it("stores a traversing file name under its base name only", async () => {
    const { srv, owner, service } = await start();
    const started = await json<{ jobId: string }>(
      await upload(srv, owner, [{ name: "../evil.md", text: "# Evil\n\nplain text about ferrets\n" }]),
      202,
    );
    expect((await waitForJob(srv, owner, started.jobId)).status).toBe("done");
    expect((await service.listDocuments("docs")).map((d) => d.source)).toEqual(["evil.md"]);
    expect(safeUploadName("..\\..\\x.md")).toBe("x.md");
    expect(safeUploadName("dir/..")).toBeUndefined();
  });

  it("refuses members, unsupported types, oversized files, too many files and missing files", async () => {
    const { srv, owner, member, service } = await start();
    await json(await upload(srv, member, [{ name: "a.md", text: "# A\n" }]), 403);
    await json(
      await upload(srv, owner, [{ name: "tool.exe", text: "MZ", type: "application/octet-stream" }]),
      400,
    );
    await json(await upload(srv, owner, [{ name: "big.md", text: "x".repeat(MAX_FILE + 1) }]), 413);
    const four = ["a", "b", "c", "d"].map((n) => ({ name: `${n}.md`, text: `# ${n}\n` }));
    await json(await upload(srv, owner, four), 400);
    await json(await upload(srv, owner, []), 400);
    await json(await call(srv.url, "/api/kb", { session: member, body: { name: "mine" } }), 403);
    // A name the service would refuse is the caller's fault: 400 naming the rule, never a 5xx.
    for (const name of ["bad name", "-leading", "a/b"]) {
      const refused = (await json(
        await call(srv.url, "/api/kb", { session: owner, body: { name } }),
        400,
      )) as { error: { code: string; issues: { path: string; message: string }[] } };
      expect(refused.error.code).toBe("invalid");
      expect(refused.error.issues[0]?.message).toContain("starting with a letter or digit");
    }
    // A rejected batch adds nothing, not even its valid files.
    await json(
      await upload(srv, owner, [
        { name: "ok.md", text: "# Fine\n" },
        { name: "bad.exe", text: "MZ" },
      ]),
      400,
    );
    expect(await service.listBases({ all: true })).toEqual([]);
  });

  it("needs a session, and the CSRF token for cookie POSTs", async () => {
    const { srv, owner } = await start();
    await json(await upload(srv, undefined, [{ name: "a.md", text: "# A\n" }]), 401);
    await json(await call(srv.url, "/api/kb"), 401);
    await json(await upload(srv, owner, [{ name: "a.md", text: "# A\n" }], { noCsrf: true }), 403);
    await json(await call(srv.url, "/api/kb", { session: owner, body: { name: "x" }, noCsrf: true }), 403);
    const bearer = new FormData();
    bearer.append("files", new Blob(["# A\n\nhello\n"]), "a.md");
    const res = await fetch(`${srv.url}/api/kb/docs/upload`, {
      method: "POST",
      headers: { authorization: `Bearer ${owner.token}` },
      body: bearer,
    });
    await json(res, 202);
  });

  it("reports unknown jobs and cancels running ones", async () => {
    const { srv, owner, service } = await start();
    await json(await call(srv.url, "/api/kb/jobs/nope", { session: owner }), 404);
    const job = service.startIngest("docs", [{ kind: "bytes", name: "a.md", data: "# A\n\nalpha\n" }]);
    const cancelled = await call(srv.url, `/api/kb/jobs/${job.id}/cancel`, {
      session: owner,
      method: "POST",
    });
    expect(cancelled.status).toBe(202);
    expect(((await cancelled.json()) as IngestJobSnapshot).id).toBe(job.id);
    const final = await job.done;
    expect(["cancelled", "done"]).toContain(final.status);
    await json(await call(srv.url, "/api/kb/docs/search?q=", { session: owner }), 400);
  });
});
