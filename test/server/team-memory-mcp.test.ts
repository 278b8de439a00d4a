/**
 * `/api/memory` over the real SQLite memory store (own memories for everyone, any user's for admins)
 * and `/api/mcp` over real MCP servers from mcp.json (list, connect, disconnect; admins only).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadMcpConfig } from "../../src/mcp/config.js";
import { McpServerPool, type McpServerView } from "../../src/mcp/server-pool.js";
import type { MemoryRecord } from "../../src/memory/types.js";
import { FILESYSTEM } from "../mcp/helpers.js";
import { call, withUsers } from "./helpers.js";
import { expectJson, startTeamServer } from "./team-helpers.js";

describe("/api/memory", () => {
  it("lists and deletes one's own memories; admins reach everyone's", async () => {
    const s = await startTeamServer();
    const { owner, users } = await withUsers(s.url, ["member"]);
    const member = users.member!;
    const memory = s.memory!;
    const mine = await memory.remember({
      userId: member.userId,
      text: "Prefers green tea",
      type: "semantic",
    });
    await memory.remember({
      userId: member.userId,
      agentId: "coder",
      text: "Uses tabs, not spaces",
      type: "procedural",
    });
    const owners = await memory.remember({
      userId: owner.userId,
      text: "Owner likes oolong",
      type: "semantic",
    });

    const list = await expectJson<MemoryRecord[]>(await call(s.url, "/api/memory", { session: member }), 200);
    expect(list.map((m) => m.text).sort()).toEqual(["Prefers green tea", "Uses tabs, not spaces"]);
    const procedural = await expectJson<MemoryRecord[]>(
      await call(s.url, "/api/memory?type=procedural", { session: member }),
      200,
    );
    expect(procedural.map((m) => m.text)).toEqual(["Uses tabs, not spaces"]);
    expect((await call(s.url, `/api/memory?userId=${owner.userId}`, { session: member })).status).toBe(403);
    expect((await call(s.url, "/api/memory?type=dreams", { session: member })).status).toBe(400);
    const seenByOwner = await expectJson<MemoryRecord[]>(
      await call(s.url, `/api/memory?userId=${member.userId}`, { session: owner }),
      200,
    );
    expect(seenByOwner).toHaveLength(2);

    // Someone else's memory is invisible to a member: 404, and it stays.
    expect(
      (await call(s.url, `/api/memory/${owners.id}`, { session: member, method: "DELETE" })).status,
    ).toBe(404);
    expect(await memory.get(owner.userId, owners.id)).toBeDefined();
    expect((await call(s.url, `/api/memory/${mine.id}`, { session: member, method: "DELETE" })).status).toBe(
      204,
    );
    expect(await memory.get(member.userId, mine.id)).toBeUndefined();
    // An admin deletes any user's memory by id alone.
    const tabs = list.find((m) => m.text.startsWith("Uses tabs"))!;
    expect((await call(s.url, `/api/memory/${tabs.id}`, { session: owner, method: "DELETE" })).status).toBe(
      204,
    );
    expect(await memory.list(member.userId)).toEqual([]);
    expect((await call(s.url, `/api/memory/${tabs.id}`, { session: owner, method: "DELETE" })).status).toBe(
      404,
    );
  });

  it("answers 501 when the server runs without memory or MCP", async () => {
    const s = await startTeamServer({ memory: false });
    const { owner } = await withUsers(s.url);
    const res = await call(s.url, "/api/memory", { session: owner });
    expect(res.status).toBe(501);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain("memory");
    expect((await call(s.url, "/api/mcp", { session: owner })).status).toBe(501);
    expect((await call(s.url, "/api/mcp/fs/connect", { session: owner, method: "POST" })).status).toBe(501);
  });
});

describe("/api/mcp", () => {
  it("lists the servers of mcp.json to everyone, connects and disconnects one; admins only", async () => {
    let pool: McpServerPool | undefined;
    const s = await startTeamServer({
      mcp: (home) => {
        const files = join(home, "shared-files");
        mkdirSync(files);
        writeFileSync(
          join(home, "mcp.json"),
          JSON.stringify({
            mcpServers: {
              fs: { command: process.execPath, args: [FILESYSTEM, files] },
              off: { command: process.execPath, args: ["-e", ""], disabled: true },
            },
          }),
        );
        pool = new McpServerPool(loadMcpConfig({ home, cwd: home, env: process.env }), process.env);
        return pool;
      },
    });
    try {
      const { owner, users } = await withUsers(s.url, ["member"]);
      const listed = await expectJson<McpServerView[]>(
        await call(s.url, "/api/mcp", { session: owner }),
        200,
      );
      expect(listed.map((v) => [v.name, v.status, v.tools])).toEqual([
        ["fs", "disconnected", 0],
        ["off", "disabled", 0],
      ]);
      // Members see the servers visible to them (mcp.json's: everyone), without process ids or errors;
      // connecting one is for owners and admins.
      const seen = await expectJson<McpServerView[]>(
        await call(s.url, "/api/mcp", { session: users.member! }),
        200,
      );
      expect(seen.map((v) => v.name)).toEqual(["fs", "off"]);
      expect(seen.every((v) => v.pid === undefined && v.error === undefined)).toBe(true);
      expect(
        (await call(s.url, "/api/mcp/fs/connect", { session: users.member!, method: "POST" })).status,
      ).toBe(403);

      const connected = await expectJson<McpServerView>(
        await call(s.url, "/api/mcp/fs/connect", { session: owner, method: "POST" }),
        200,
      );
      expect(connected).toMatchObject({ name: "fs", status: "connected", transport: "stdio" });
      expect(connected.tools).toBeGreaterThan(0);
      expect(pool?.registry.names().some((name) => name.startsWith("fs_"))).toBe(true);

      const disconnected = await expectJson<McpServerView>(
        await call(s.url, "/api/mcp/fs/disconnect", { session: owner, method: "POST" }),
        200,
      );
      expect(disconnected).toMatchObject({ status: "disconnected", tools: 0 });
      expect(pool?.registry.names().some((name) => name.startsWith("fs_"))).toBe(false);
      expect((await call(s.url, "/api/mcp/off/connect", { session: owner, method: "POST" })).status).toBe(
        409,
      );
      expect((await call(s.url, "/api/mcp/nope/connect", { session: owner, method: "POST" })).status).toBe(
        404,
      );
    } finally {
      await pool?.close();
    }
  });
});
