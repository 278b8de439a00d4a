/**
 * MCP servers that belong to someone, over real HTTP with a real stdio MCP server: a private server
 * is unknown (404 that names nothing) to a member outside on every `/api/mcp` route, its tools are
 * neither in their catalogue nor offered to their runs (`/v1`, the fake model's request log shows the
 * tool list); its owner's runs get them; admins see everything; chosen people see and use it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CatalogueEntry } from "../../src/capabilities/index.js";
import { McpServerPool, type McpServerView } from "../../src/mcp/server-pool.js";
import type { AgentRecord } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { EVERYTHING } from "../mcp/helpers.js";
import { call, type Session, withUsers } from "./helpers.js";
import { expectJson, startTeamServer, type TeamServer } from "./team-helpers.js";

let llm: FakeLlmServer;
beforeAll(async () => {
  llm = await startFakeLlmServer({});
});
afterAll(async () => {
  await llm.close();
});

async function tokenOf(s: TeamServer, session: Session): Promise<string> {
  const created = await expectJson<{ token: string }>(
    await call(s.url, "/api/tokens", { session, body: { name: "script" } }),
    201,
  );
  return created.token;
}

/** The tool names the model was offered on a `/v1` run of agent "open" for `session`. */
async function offeredTools(s: TeamServer, session: Session): Promise<string> {
  const token = await tokenOf(s, session);
  const before = llm.requests.length;
  const res = await fetch(`${s.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "open", messages: [{ role: "user", content: "hi" }] }),
  });
  expect(res.status).toBe(200);
  await res.text();
  const sent = llm.requests.slice(before);
  expect(sent.length).toBeGreaterThan(0);
  return JSON.stringify(sent.map((r) => r.body));
}

async function names(s: TeamServer, session: Session): Promise<string[]> {
  return (await expectJson<McpServerView[]>(await call(s.url, "/api/mcp", { session }), 200)).map(
    (v) => v.name,
  );
}

describe("MCP server visibility", () => {
  it("hides a private server from a member outside everywhere, admins see it, chosen people use it", async () => {
    let pool: McpServerPool | undefined;
    const s = await startTeamServer({
      llmUrl: llm.url,
      mcp: () => {
        pool = new McpServerPool([], process.env);
        return pool;
      },
    });
    try {
      const { owner, users } = await withUsers(s.url, ["admin", "member"]);
      const admin = users.admin!;
      const member = users.member!;
      await expectJson<AgentRecord>(
        await call(s.url, "/api/agents", { session: owner, body: { id: "open", name: "Open" } }),
        201,
      );
      const added = await expectJson<McpServerView>(
        await call(s.url, "/api/mcp", {
          session: owner,
          body: {
            name: "ev",
            transport: "stdio",
            command: process.execPath,
            args: [EVERYTHING, "stdio"],
            visibility: "private",
          },
        }),
        201,
      );
      expect(added).toMatchObject({ name: "ev", ownerId: owner.userId, visibility: "private" });

      // A member outside: not listed, 404 naming nothing on every route.
      expect(await names(s, member)).not.toContain("ev");
      expect(await names(s, admin)).toContain("ev");
      const routes: Array<[string, string, unknown?]> = [
        ["PATCH", "/api/mcp/ev", { visibility: "everyone" }],
        ["DELETE", "/api/mcp/ev"],
        ["POST", "/api/mcp/ev/connect", {}],
        ["POST", "/api/mcp/ev/disconnect", {}],
        ["POST", "/api/mcp/ev/signin", {}],
        ["DELETE", "/api/mcp/ev/signin"],
        ["POST", "/api/mcp/prompts/ev/simple_prompt", { arguments: {} }],
      ];
      for (const [method, path, body] of routes) {
        const res = await call(s.url, path, { session: member, method, ...(body ? { body } : {}) });
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(await res.text()).not.toContain('"ev"');
      }
      const prompts = await call(s.url, "/api/mcp/prompts", { session: member });
      expect(JSON.stringify(await prompts.json())).not.toContain('"server":"ev"');
      const ownerPrompts = await call(s.url, "/api/mcp/prompts", { session: owner });
      expect(JSON.stringify(await ownerPrompts.json())).toContain('"server":"ev"');

      // The catalogue and the runs: the member's run is not offered the tools, the owner's is.
      const catalogue = async (session: Session) =>
        (await expectJson<CatalogueEntry[]>(await call(s.url, "/api/tools", { session }), 200)).map(
          (e) => e.name,
        );
      expect(await catalogue(member)).not.toContain("ev_echo");
      expect(await catalogue(admin)).toContain("ev_echo");
      expect(await offeredTools(s, member)).not.toContain("ev_echo");
      expect(await offeredTools(s, owner)).toContain("ev_echo");

      // Chosen people: the owner shares it with the member, who now sees and uses it but may not
      // change or remove it.
      const shared = await expectJson<McpServerView>(
        await call(s.url, "/api/mcp/ev", {
          session: owner,
          method: "PATCH",
          body: { visibility: "people", allowedUsers: [member.userId] },
        }),
        200,
      );
      expect(shared).toMatchObject({ visibility: "people", allowedUsers: [member.userId] });
      expect(await names(s, member)).toContain("ev");
      expect(await offeredTools(s, member)).toContain("ev_echo");
      const patch = await call(s.url, "/api/mcp/ev", {
        session: member,
        method: "PATCH",
        body: { visibility: "everyone" },
      });
      expect(patch.status).toBe(403);
      expect((await call(s.url, "/api/mcp/ev", { session: member, method: "DELETE" })).status).toBe(403);
      const bad = await call(s.url, "/api/mcp/ev", {
        session: owner,
        method: "PATCH",
        body: { visibility: "nobody" },
      });
      expect(bad.status).toBe(400);

      // Stored: the saved server keeps who sees it.
      const stored = s.db
        .prepare("SELECT value_json FROM server_settings WHERE key = 'mcpServers'")
        .get() as { value_json: string };
      expect(stored.value_json).toContain(member.userId);

      // Members may add a remote server (theirs), not a stdio one.
      const stdio = await call(s.url, "/api/mcp", {
        session: member,
        body: { name: "mine", transport: "stdio", command: process.execPath, args: [] },
      });
      expect(stdio.status).toBe(403);
      // A member's remote server stays private to them: sharing it with everyone is refused.
      const everyone = await call(s.url, "/api/mcp", {
        session: member,
        body: { name: "theirs", url: "https://mcp.example.com/mcp", visibility: "everyone" },
      });
      expect(everyone.status).toBe(403);
      expect(await everyone.text()).toContain("private to them");
    } finally {
      await pool?.close();
    }
  }, 60_000);
});
