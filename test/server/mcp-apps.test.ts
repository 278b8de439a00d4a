/**
 * MCP Apps routes over a real team server whose agent uses the official "basic-server-vanillajs"
 * example app as a stdio MCP server: the answer's tool part links the app, its document is served
 * sandboxed to the person who may read the chat (404 for anyone else), and the app's tool calls go
 * through the agent's rules: a denied tool is refused, an ask-first one waits for the person's
 * approval (and a decline is the app's answer), and only tools of the app's own server run. A tool
 * for the app only is never offered to the model, and the app's declared origins make its CSP.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { loadMcpConfig } from "../../src/mcp/config.js";
import { McpServerPool } from "../../src/mcp/server-pool.js";
import type { McpAppCallOutcome } from "../../src/team/mcp-apps.js";
import type { ChannelMessage, MessagePart, TeamRun } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { BASIC_APP, FIXTURES } from "../mcp/helpers.js";
import { call, type Session, withUsers } from "./helpers.js";
import { expectJson, startTeamServer } from "./team-helpers.js";

let llm: FakeLlmServer;

beforeAll(async () => {
  llm = await startFakeLlmServer({
    defaultTurn: (request) => {
      const body = JSON.stringify(request.body);
      if (body.includes('"role":"tool"')) return { text: "Here is the time." };
      if (body.includes("counter please")) return { toolCalls: [{ name: "counter_show_counter", args: {} }] };
      return { toolCalls: [{ name: "clock_get-time", args: {} }] };
    },
  });
});

afterAll(async () => {
  await llm.close();
});

type ToolPart = Extract<MessagePart, { type: "tool" }>;

it("serves an answer's MCP App to readers of the chat and runs its tool calls through the agent's rules", async () => {
  const s = await startTeamServer({
    llmUrl: llm.url,
    mcp: (home) => {
      writeFileSync(
        join(home, "mcp.json"),
        JSON.stringify({
          mcpServers: { clock: { command: process.execPath, args: [BASIC_APP, "--stdio"] } },
        }),
      );
      const pool = new McpServerPool(loadMcpConfig({ home, cwd: home, env: {} }), {});
      void pool.startAll();
      return pool;
    },
  });
  const { owner, users } = await withUsers(s.url, ["member"]);
  const other = users.member!;
  const channel = await expectJson<{ id: string }>(
    await call(s.url, "/api/channels", {
      session: owner,
      body: {
        kind: "direct",
        name: "time",
        leaderAgentId: "assistant",
        agentIds: ["assistant"],
        userIds: [],
      },
    }),
    201,
  );
  const posted = await expectJson<{ runs: TeamRun[] }>(
    await call(s.url, `/api/channels/${channel.id}/messages`, { session: owner, body: { text: "time?" } }),
    201,
  );
  const runId = posted.runs[0]!.id;
  let answer: ChannelMessage | undefined;
  await expect
    .poll(
      async () => {
        const messages = await expectJson<ChannelMessage[]>(
          await call(s.url, `/api/channels/${channel.id}/messages`, { session: owner }),
          200,
        );
        answer = messages.find((m) => m.runId === runId && m.text.includes("Here is the time"));
        return answer !== undefined;
      },
      { timeout: 20_000, interval: 50 },
    )
    .toBe(true);
  const part = answer!.parts.find((p): p is ToolPart => p.type === "tool")!;
  expect(part.app).toEqual({
    server: "clock",
    resourceUri: "ui://get-time/mcp-app.html",
    structuredContent: { time: expect.any(String) },
  });

  const base = `/api/channels/${channel.id}/mcp-apps/${runId}/${encodeURIComponent(part.callId)}`;
  const view = await call(s.url, base, { session: owner });
  expect(view.status).toBe(200);
  expect(view.headers.get("content-type")).toBe("text/html; charset=utf-8");
  const csp = view.headers.get("content-security-policy") ?? "";
  expect(csp).toContain("sandbox allow-scripts;");
  expect(csp).toContain("connect-src 'none'");
  expect(csp).not.toContain("'self' ");
  expect(view.headers.get("x-frame-options")).toBe("SAMEORIGIN");
  expect(await view.text()).toContain('id="get-time-btn"');

  // Someone who may not read the chat (another account) learns nothing.
  expect((await call(s.url, base, { session: other })).status).toBe(404);
  const appCall = (who: Session, name: string) =>
    call(s.url, `${base}/tools/call`, { session: who, body: { name, arguments: {} } });
  expect((await appCall(other, "get-time")).status).toBe(404);
  expect(
    (await call(s.url, `/api/channels/${channel.id}/mcp-apps/no-such-run/x`, { session: owner })).status,
  ).toBe(404);

  const ran = await expectJson<McpAppCallOutcome>(await appCall(owner, "get-time"), 200);
  expect(ran).toMatchObject({ status: "done", result: { structuredContent: { time: expect.any(String) } } });
  // Only tools of the app's own server that the agent has.
  expect((await appCall(owner, "assistant_read_file")).status).toBe(403);
  expect((await appCall(owner, "read_file")).status).toBe(403);

  // Ask first: the call waits for this person's approval; a decline is the app's answer.
  await expectJson(
    await call(s.url, "/api/agents/assistant", {
      session: owner,
      method: "PATCH",
      body: { askFirst: ["clock_*"] },
    }),
    200,
  );
  const asked = await expectJson<McpAppCallOutcome>(await appCall(owner, "get-time"), 200);
  expect(asked).toMatchObject({ status: "approval_required", tool: "clock_get-time" });
  if (asked.status !== "approval_required") throw new Error("expected an approval");
  const decide = (who: Session, approvalId: string, decision: string) =>
    call(s.url, `${base}/approvals/${approvalId}`, { session: who, body: { decision } });
  expect((await decide(other, asked.approvalId, "approve")).status).toBe(404);
  const declined = await expectJson<McpAppCallOutcome>(await decide(owner, asked.approvalId, "reject"), 200);
  expect(declined).toMatchObject({ status: "done", result: { isError: true } });
  // Answered once only.
  expect((await decide(owner, asked.approvalId, "approve")).status).toBe(404);
  const again = await expectJson<McpAppCallOutcome>(await appCall(owner, "get-time"), 200);
  if (again.status !== "approval_required") throw new Error("expected an approval");
  const approved = await expectJson<McpAppCallOutcome>(await decide(owner, again.approvalId, "approve"), 200);
  expect(approved).toMatchObject({
    status: "done",
    result: { structuredContent: { time: expect.any(String) } },
  });

  // A denied tool is refused, and its app is no longer served.
  await expectJson(
    await call(s.url, "/api/agents/assistant", {
      session: owner,
      method: "PATCH",
      body: { toolsDeny: ["clock_get-time"] },
    }),
    200,
  );
  expect((await appCall(owner, "get-time")).status).toBe(403);
  expect((await call(s.url, base, { session: owner })).status).toBe(409);
}, 60_000);

it("keeps app-only tools from the model, lets the app call them, and builds the CSP from the declared origins", async () => {
  const s = await startTeamServer({
    llmUrl: llm.url,
    mcp: (home) => {
      writeFileSync(
        join(home, "mcp.json"),
        JSON.stringify({
          mcpServers: {
            counter: { command: process.execPath, args: [join(FIXTURES, "app-only-server.mjs")] },
          },
        }),
      );
      const pool = new McpServerPool(loadMcpConfig({ home, cwd: home, env: {} }), {});
      void pool.startAll();
      return pool;
    },
  });
  const { owner } = await withUsers(s.url);
  const channel = await expectJson<{ id: string }>(
    await call(s.url, "/api/channels", {
      session: owner,
      body: {
        kind: "direct",
        name: "count",
        leaderAgentId: "assistant",
        agentIds: ["assistant"],
        userIds: [],
      },
    }),
    201,
  );
  const before = llm.requests.length;
  const posted = await expectJson<{ runs: TeamRun[] }>(
    await call(s.url, `/api/channels/${channel.id}/messages`, {
      session: owner,
      body: { text: "counter please" },
    }),
    201,
  );
  const runId = posted.runs[0]!.id;
  let part: ToolPart | undefined;
  await expect
    .poll(
      async () => {
        const messages = await expectJson<ChannelMessage[]>(
          await call(s.url, `/api/channels/${channel.id}/messages`, { session: owner }),
          200,
        );
        part = messages
          .find((m) => m.runId === runId)
          ?.parts.find((p): p is ToolPart => p.type === "tool" && p.app !== undefined);
        return part !== undefined;
      },
      { timeout: 20_000, interval: 50 },
    )
    .toBe(true);
  const offered = JSON.stringify(llm.requests.slice(before).map((r) => r.body));
  expect(offered).toContain("counter_show_counter");
  expect(offered).not.toContain("counter_bump");

  const base = `/api/channels/${channel.id}/mcp-apps/${runId}/${encodeURIComponent(part!.callId)}`;
  const bumped = await expectJson<McpAppCallOutcome>(
    await call(s.url, `${base}/tools/call`, { session: owner, body: { name: "bump" } }),
    200,
  );
  expect(bumped).toMatchObject({ status: "done", result: { structuredContent: { count: 1 } } });

  const view = await call(s.url, base, { session: owner });
  expect(view.status).toBe(200);
  const csp = view.headers.get("content-security-policy") ?? "";
  expect(csp).toContain("connect-src https://api.example.com;");
  expect(csp).toContain("script-src 'unsafe-inline' blob: https://cdn.example.com;");
  expect(csp).not.toContain("evil");
}, 60_000);
