/**
 * An MCP tool on an agent's ask-first list waits for approval; the same tool on another agent does
 * not. A real `dimsum serve` with the MCP "everything" server from mcp.json and the scripted fake LLM.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { TeamRun } from "../../src/team/types.js";
import {
  type FakeLlmServer,
  type RecordedRequest,
  startFakeLlmServer,
} from "../../src/testing/fake-llm-server.js";
import { EVERYTHING } from "../mcp/helpers.js";
import { call, login, type Session, tempDir } from "./helpers.js";
import { type ServeProcess, startServe } from "./serve-process.js";

const PASSWORD = "ask-first-mcp-password";

let llm: FakeLlmServer;
let serve: ServeProcess | undefined;

/** Which agent a request is for: the persona's name is in its system prompt. */
function agentOf(request: RecordedRequest): string {
  const body = request.body as { messages: Array<{ role: string; content: unknown }> };
  const system = JSON.stringify(body.messages.find((m) => m.role === "system")?.content ?? "");
  return system.includes("(@coder)") ? "coder" : "assistant";
}

beforeAll(async () => {
  llm = await startFakeLlmServer({
    defaultTurn: (request) => {
      const body = JSON.stringify(request.body);
      if (body.includes("Echo: from")) return { text: `done for @${agentOf(request)}` };
      return { toolCalls: [{ name: "everything_echo", args: { message: `from ${agentOf(request)}` } }] };
    },
  });
});

afterAll(async () => {
  await serve?.stop();
  await llm.close();
});

async function json<T>(res: Response | Promise<Response>): Promise<T> {
  const r = await res;
  if (r.status >= 400) throw new Error(`HTTP ${r.status}: ${await r.text()}`);
  return (await r.json()) as T;
}

async function settled(url: string, owner: Session, runId: string, states: string[]): Promise<TeamRun> {
  for (;;) {
    const run = await json<TeamRun>(call(url, `/api/runs/${runId}`, { session: owner }));
    if (states.includes(run.status)) return run;
    await new Promise((r) => setTimeout(r, 50));
  }
}

it("asks first for an MCP tool on one agent's list, and not for the other agent", async () => {
  const home = tempDir("dimsum-ask-first-");
  writeFileSync(
    join(home, "mcp.json"),
    JSON.stringify({
      mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } },
    }),
  );
  serve = await startServe(home, {
    DIMSUM_OWNER_PASSWORD: PASSWORD,
    DIMSUM_MODEL: "openai:gpt-test",
    OPENAI_API_KEY: "sk-ask-first",
    OPENAI_BASE_URL: `${llm.url}/v1`,
  });
  const url = serve.url;
  const owner = await login(url, "owner", PASSWORD);

  const patched = await json<{ askFirst: string[] }>(
    call(url, "/api/agents/assistant", {
      session: owner,
      method: "PATCH",
      body: { askFirst: ["everything_*"] },
    }),
  );
  expect(patched.askFirst).toEqual(["everything_*"]);

  const ask = async (agentId: string): Promise<string> => {
    const channel = await json<{ id: string }>(
      call(url, "/api/channels", {
        session: owner,
        body: { kind: "direct", name: agentId, leaderAgentId: agentId, agentIds: [agentId], userIds: [] },
      }),
    );
    const posted = await json<{ runs: TeamRun[] }>(
      call(url, `/api/channels/${channel.id}/messages`, { session: owner, body: { text: "echo something" } }),
    );
    return posted.runs[0]!.id;
  };

  const coderRun = await ask("coder");
  expect((await settled(url, owner, coderRun, ["done", "error", "waiting"])).status).toBe("done");

  const assistantRun = await ask("assistant");
  const waiting = await settled(url, owner, assistantRun, ["done", "error", "waiting"]);
  expect(waiting.status).toBe("waiting");
  expect(waiting.pendingApprovals).toEqual([
    expect.objectContaining({ tool: "everything_echo", reason: expect.stringContaining("ask-first") }),
  ]);
  const answered = await call(
    url,
    `/api/runs/${assistantRun}/approvals/${waiting.pendingApprovals![0]!.callId}`,
    {
      session: owner,
      body: { decision: "approve" },
    },
  );
  expect(answered.status).toBe(200);
  expect((await settled(url, owner, assistantRun, ["done", "error"])).status).toBe("done");
  expect(JSON.stringify(llm.requests.at(-1)?.body)).toContain("Echo: from assistant");
}, 60_000);
