/**
 * Knowledge bases that belong to someone, on a real server over real SQLite: a private base is
 * unknown (404) to a member outside on every route and in `rag_query`; chosen people and admins see it.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { KnowledgeService } from "../../src/knowledge/index.js";
import { createRagTool } from "../../src/knowledge/rag-tool.js";
import type { KnowledgeBaseInfo } from "../../src/knowledge/types.js";
import { mountKnowledgeRoutes } from "../../src/server/routes/knowledge.js";
import { type Database, openDatabase } from "../../src/store/database.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { testToolContext } from "../support/tool-context.js";
import { call, startServer, tempDir, withUsers } from "./helpers.js";

const opened: Database[] = [];
afterEach(() => {
  for (const db of opened.splice(0)) db.close();
});

async function start() {
  const db = openDatabase(join(tempDir("dimsum-kb-visibility-"), "kb.db"));
  opened.push(db);
  const service = KnowledgeService.sqlite(db);
  const srv = await startServer({ routes: [mountKnowledgeRoutes(service)] });
  const { owner, users } = await withUsers(srv.url, ["admin", "member"]);
  const created = await call(srv.url, "/api/kb", {
    session: owner,
    body: { name: "vault", description: "the owner's notes", visibility: "private" },
  });
  expect(created.status).toBe(201);
  expect(await created.json()).toMatchObject({ ownerId: owner.userId, visibility: "private" });
  await service.ingest("vault", [
    { kind: "bytes", name: "plan.md", data: "# Plan\n\nThe secret dumpling recipe uses ginger." },
  ]);
  await service.ingest("public", [
    { kind: "bytes", name: "menu.md", data: "# Menu\n\nDumplings every day." },
  ]);
  return { srv, service, owner, admin: users.admin!, member: users.member! };
}

async function rag(service: KnowledgeService, viewer: { userId: string; role: "member" }, args: object) {
  const registry = new ToolRegistry();
  registry.register(createRagTool(service, { viewer }));
  const prepared = registry.prepareCall("rag_query", JSON.stringify(args));
  if (!prepared.ok) throw new Error(prepared.error);
  return registry.execute(prepared, testToolContext({ runId: "run-1" }));
}

describe("knowledge bases that belong to someone", () => {
  it("answers 404 to a member outside on every route, and lists it for admins", async () => {
    const { srv, member, admin } = await start();
    const listed = (await (await call(srv.url, "/api/kb", { session: member })).json()) as {
      bases: KnowledgeBaseInfo[];
    };
    expect(listed.bases.map((b) => b.name)).toEqual(["public"]);
    for (const [path, method, body] of [
      ["/api/kb/vault/documents", "GET", undefined],
      ["/api/kb/vault/search?q=ginger", "GET", undefined],
      ["/api/kb/vault", "PATCH", { visibility: "everyone" }],
    ] as const) {
      const res = await call(srv.url, path, { session: member, method, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(await res.text()).not.toContain("ginger");
    }
    const adminList = (await (await call(srv.url, "/api/kb", { session: admin })).json()) as {
      bases: KnowledgeBaseInfo[];
    };
    expect(adminList.bases.map((b) => b.name)).toEqual(["public", "vault"]);
    expect((await call(srv.url, "/api/kb/vault/documents", { session: admin })).status).toBe(200);
  });

  it("shares it with chosen people, changed by its owner", async () => {
    const { srv, owner, member } = await start();
    const shared = await call(srv.url, "/api/kb/vault", {
      session: owner,
      method: "PATCH",
      body: { visibility: "people", allowedUsers: [member.userId] },
    });
    expect(shared.status).toBe(200);
    expect(await shared.json()).toMatchObject({ visibility: "people", allowedUsers: [member.userId] });
    const search = await call(srv.url, "/api/kb/vault/search?q=ginger", { session: member });
    expect(search.status).toBe(200);
    expect(await search.text()).toContain("ginger");
    // Chosen, not owner: the member may not change who sees it.
    const refused = await call(srv.url, "/api/kb/vault", {
      session: member,
      method: "PATCH",
      body: { visibility: "everyone" },
    });
    expect(refused.status).toBe(403);
  });

  it("keeps rag_query of a run to the bases its person may see", async () => {
    const { service, member, owner } = await start();
    const outsider = { userId: member.userId, role: "member" as const };
    const named = await rag(service, outsider, { query: "ginger", kb: "vault" });
    expect(named.isError).toBe(true);
    expect(named.content).not.toContain("ginger");
    const all = await rag(service, outsider, { query: "ginger dumpling" });
    expect(all.content).not.toContain("ginger");
    const mine = await rag(
      service,
      { userId: owner.userId, role: "member" },
      { query: "ginger", kb: "vault" },
    );
    expect(mine.content).toContain("ginger");
  });
});
