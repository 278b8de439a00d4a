/**
 * MCP sampling in team runs: a real stdio MCP server (built with the SDK) whose tool asks the client
 * for a completion (`sampling/createMessage`), called by the fake LLM in a channel run. The request
 * goes only to the person the run acts for, with the conversation, the token limit and the model;
 * only they can answer (others get a 404). Approved, the agent's own model (the fake LLM) answers
 * and the text reaches the server's tool; declined, the server gets a rejection and the trace says
 * why; a run nobody is present for (a schedule's post) refuses with the reason.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadMcpConfig } from "../../src/mcp/config.js";
import { McpServerPool } from "../../src/mcp/server-pool.js";
import type { ChannelMessage, ChannelRecord, ElicitationView, PostResult } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import type { FakeTurn, RecordedRequest } from "../../src/testing/fake-llm-types.js";
import { call, type Session, withUsers } from "../server/helpers.js";
import {
  expectJson,
  follow,
  openSocket,
  runFrame,
  startTeamServer,
  type TeamServer,
} from "../server/team-helpers.js";
import type { TestClient } from "../server/ws-helpers.js";
import { AgentScripts, lastUserText } from "../team/harness.js";
import { FIXTURES } from "./helpers.js";

const HAIKU = "steam over bamboo";
let llm: FakeLlmServer;
const scripts = new AgentScripts();

/** The server's sampling request (no agent's system prompt) gets the haiku; agents their scripts. */
function turn(request: RecordedRequest): FakeTurn {
  if (lastUserText(request) === "Write a haiku about dumplings.") return { text: HAIKU };
  return scripts.turn(request);
}

beforeAll(async () => {
  llm = await startFakeLlmServer({ defaultTurn: turn });
});
afterAll(async () => {
  await llm.close();
});

/** The latest tool result and Dimsum's note, as the model saw them, said back as the answer. */
function sayToolResult(request: RecordedRequest): FakeTurn {
  const body = JSON.stringify(request.body);
  const results = [...body.matchAll(/haiku: [a-z ]+|sampling failed: (?:[^"\\[]|\\")*/g)].map((m) => m[0]);
  const notes = [...body.matchAll(/\[dimsum\] ((?:[^"\\]|\\")*)/g)].map((m) => m[1]?.replaceAll('\\"', '"'));
  return { text: `${results.at(-1)?.trim() ?? "no result"} | ${notes.at(-1) ?? "no note"}` };
}

async function start(): Promise<TeamServer> {
  return startTeamServer({
    llmUrl: llm.url,
    mcp: (home) => {
      writeFileSync(
        join(home, "mcp.json"),
        JSON.stringify({
          mcpServers: {
            feat: { command: process.execPath, args: [join(FIXTURES, "client-features-server.mjs")] },
          },
        }),
      );
      const pool = new McpServerPool(loadMcpConfig({ home, cwd: home, env: {} }), {});
      void pool.startAll();
      return pool;
    },
  });
}

async function groupWith(s: TeamServer, owner: Session, member: Session): Promise<ChannelRecord> {
  return expectJson<ChannelRecord>(
    await call(s.url, "/api/channels", {
      session: owner,
      body: {
        kind: "group",
        name: "Haiku",
        agentIds: ["assistant"],
        leaderAgentId: "assistant",
        userIds: [member.userId],
      },
    }),
    201,
  );
}

/** Scripts the agent to call the sampling tool, posts as the person, and waits for the approval request. */
async function askThrough(
  s: TeamServer,
  session: Session,
  socket: TestClient,
  channelId: string,
  text: string,
): Promise<{ runId: string; request: ElicitationView }> {
  scripts.add("assistant", { toolCalls: [{ name: "feat_sample_haiku", args: {} }] }, sayToolResult);
  const posted = await expectJson<PostResult>(
    await call(s.url, `/api/channels/${channelId}/messages`, { session, body: { text } }),
    201,
  );
  const runId = posted.runs[0]?.id as string;
  const frame = await socket.next((f) => f.type === "elicitation" && f.runId === runId);
  return { runId, request: frame.request as ElicitationView };
}

async function answerText(s: TeamServer, session: Session, channelId: string, runId: string) {
  const messages = await expectJson<ChannelMessage[]>(
    await call(s.url, `/api/channels/${channelId}/messages`, { session }),
    200,
  );
  return messages.find((m) => m.runId === runId)?.text;
}

const samplingRequests = () =>
  llm.requests.filter((r) => JSON.stringify(r.body).includes("Write a haiku about dumplings."));

describe("MCP sampling in team runs", () => {
  it("asks the person the run acts for; approved, the agent's model answers the server", async () => {
    const s = await start();
    const { owner, users } = await withUsers(s.url, ["member"]);
    const member = users.member as Session;
    const group = await groupWith(s, owner, member);
    const mine = await openSocket(s, member);
    const admins = await openSocket(s, owner);
    await follow(mine, group.id);
    await follow(admins, group.id);

    const { runId, request } = await askThrough(s, member, mine, group.id, "a haiku please");
    expect(request).toMatchObject({
      runId,
      channelId: group.id,
      userId: member.userId,
      server: "feat",
      mode: "sampling",
      sampling: {
        messages: [{ role: "user", text: "Write a haiku about dumplings." }],
        maxTokens: 100,
        model: "gpt-test",
      },
    });
    // Nothing reached the model before the person approved.
    expect(samplingRequests()).toHaveLength(0);
    const path = `/api/runs/${runId}/elicitations/${request.id}`;
    // Listed for its person only; nobody else can answer it.
    const listed = await expectJson<ElicitationView[]>(
      await call(s.url, `/api/channels/${group.id}/elicitations`, { session: member }),
      200,
    );
    expect(listed.map((e) => e.id)).toEqual([request.id]);
    expect((await call(s.url, path, { session: owner, body: { action: "accept" } })).status).toBe(404);

    expect((await call(s.url, path, { session: member, body: { action: "accept" } })).status).toBe(200);
    await mine.next(runFrame(runId, "done"));
    expect(await answerText(s, member, group.id, runId)).toBe(
      `haiku: ${HAIKU} | served the server's sampling request with the agent's model (gpt-test), as the person approved`,
    );
    // One completion, with the server's token limit and no tools.
    const served = samplingRequests();
    expect(served).toHaveLength(1);
    const body = served[0]?.body as { max_tokens?: number; max_completion_tokens?: number; tools?: unknown };
    expect(body.max_tokens ?? body.max_completion_tokens).toBe(100);
    expect(body.tools).toBeUndefined();
    expect(admins.frames.some((f) => f.type === "elicitation" || f.type === "elicitation_closed")).toBe(
      false,
    );

    // Declined: the server hears the rejection, the trace says why, the model is not asked.
    const { runId: second, request: asked } = await askThrough(s, member, mine, group.id, "another");
    expect(
      (
        await call(s.url, `/api/runs/${second}/elicitations/${asked.id}`, {
          session: member,
          body: { action: "decline" },
        })
      ).status,
    ).toBe(200);
    await mine.next(runFrame(second, "done"));
    const declined = await answerText(s, member, group.id, second);
    expect(declined).toContain("sampling failed: MCP error -1: ");
    expect(declined).toContain("User rejected sampling request: the person chose decline");
    expect(declined).toContain("| refused the server's sampling request: the person chose decline");
    expect(samplingRequests()).toHaveLength(1);

    // A post made for the person without them at the chat (as a schedule's): refused, nobody asked.
    scripts.add("assistant", { toolCalls: [{ name: "feat_sample_haiku", args: {} }] }, sayToolResult);
    const scheduled = await s.team.postMessage({ userId: member.userId, role: "member" }, group.id, "haiku");
    const scheduledRun = scheduled.runs[0]?.id as string;
    await mine.next(runFrame(scheduledRun, "done"));
    expect(await answerText(s, member, group.id, scheduledRun)).toContain(
      "| refused the server's sampling request: this run has no one to ask (headless)",
    );
    expect(mine.frames.filter((f) => f.type === "elicitation")).toHaveLength(2);
    expect(samplingRequests()).toHaveLength(1);
    mine.ws.close();
    admins.ws.close();
  });
});
