/**
 * MCP elicitation in team runs: a real stdio MCP server (built with the SDK) whose tool asks for
 * input, called by the fake LLM in a channel run. The request goes only to the person the run acts
 * for (over the WebSocket), only they can answer (others get a 404), the answer is validated and
 * reaches the tool (URL mode too); decline and a timeout reach it as such, stopping the run withdraws the
 * question, and a run nobody is present for (a schedule's post) declines with the reason in the
 * tool result. A called agent's (call_agent) MCP tool asks the person of the outer run, shown in
 * that run's answer. The prompts route lists the servers' prompts for members and fills one in.
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
import { AgentScripts } from "../team/harness.js";
import { FIXTURES } from "./helpers.js";

let llm: FakeLlmServer;
const scripts = new AgentScripts();

beforeAll(async () => {
  llm = await startFakeLlmServer({ defaultTurn: scripts.turn });
});
afterAll(async () => {
  await llm.close();
});

/** The latest tool result and Dimsum's note, as the model saw them, said back as the answer. */
function sayToolResult(request: RecordedRequest): FakeTurn {
  const body = JSON.stringify(request.body);
  const results = [...body.matchAll(/hello [A-Za-z]+, age \d+|no name \(\w+\)|link \w+/g)].map((m) => m[0]);
  const notes = [...body.matchAll(/\[dimsum\] ((?:[^"\\]|\\")*)/g)].map((m) => m[1]?.replaceAll('\\"', '"'));
  return { text: `${results.at(-1) ?? "no result"} | ${notes.at(-1) ?? "no note"}` };
}

async function startWithAsker(timeoutMs?: number): Promise<TeamServer> {
  return startTeamServer({
    llmUrl: llm.url,
    ...(timeoutMs !== undefined ? { team: { elicitationTimeoutMs: timeoutMs } } : {}),
    mcp: (home) => {
      writeFileSync(
        join(home, "mcp.json"),
        JSON.stringify({
          mcpServers: {
            feat: { command: process.execPath, args: [join(FIXTURES, "client-features-server.mjs")] },
            web: { command: process.execPath, args: [join(FIXTURES, "url-elicitation-server.mjs")] },
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
        name: "Asking",
        agentIds: ["assistant"],
        leaderAgentId: "assistant",
        userIds: [member.userId],
      },
    }),
    201,
  );
}

/** Scripts the agent to call `tool`, posts `text` as the person, and waits for the question on their socket. */
async function askThrough(
  s: TeamServer,
  session: Session,
  socket: TestClient,
  channelId: string,
  tool: string,
  text: string,
): Promise<{ runId: string; request: ElicitationView }> {
  scripts.add("assistant", { toolCalls: [{ name: tool, args: {} }] }, sayToolResult);
  const posted = await expectJson<PostResult>(
    await call(s.url, `/api/channels/${channelId}/messages`, { session, body: { text } }),
    201,
  );
  const runId = posted.runs[0]?.id as string;
  const frame = await socket.next((f) => f.type === "elicitation" && f.runId === runId);
  return { runId, request: frame.request as ElicitationView };
}

/** Answers a question as `session`; the HTTP status. */
async function answer(s: TeamServer, session: Session, runId: string, id: string, body: unknown) {
  return (await call(s.url, `/api/runs/${runId}/elicitations/${id}`, { session, body })).status;
}

async function answerText(s: TeamServer, session: Session, channelId: string, runId: string) {
  const messages = await expectJson<ChannelMessage[]>(
    await call(s.url, `/api/channels/${channelId}/messages`, { session }),
    200,
  );
  return messages.find((m) => m.runId === runId)?.text;
}

describe("MCP elicitation in team runs", () => {
  it("asks the person the run acts for, takes only their valid answer, and passes decline on", async () => {
    const s = await startWithAsker();
    const { owner, users } = await withUsers(s.url, ["member"]);
    const member = users.member as Session;
    const group = await groupWith(s, owner, member);
    const mine = await openSocket(s, member);
    const admins = await openSocket(s, owner);
    await follow(mine, group.id);
    await follow(admins, group.id);

    const { runId, request } = await askThrough(s, member, mine, group.id, "feat_ask_name", "greet me");
    expect(request).toMatchObject({
      runId,
      channelId: group.id,
      userId: member.userId,
      server: "feat",
      mode: "form",
      message: "What should I call you?",
    });
    expect(Object.keys(request.requestedSchema?.properties ?? {})).toEqual(["name", "age"]);
    const path = `/api/runs/${runId}/elicitations/${request.id}`;

    // The open request is listed for its person only (a page opened later shows it too).
    const listed = await expectJson<ElicitationView[]>(
      await call(s.url, `/api/channels/${group.id}/elicitations`, { session: member }),
      200,
    );
    expect(listed.map((e) => e.id)).toEqual([request.id]);
    expect(
      await expectJson<ElicitationView[]>(
        await call(s.url, `/api/channels/${group.id}/elicitations`, { session: owner }),
        200,
      ),
    ).toEqual([]);

    // Someone else, even the owner, cannot answer: the request does not exist for them.
    const other = await call(s.url, path, {
      session: owner,
      body: { action: "accept", content: { name: "Eve" } },
    });
    expect(other.status).toBe(404);
    // An answer that does not fit the form is refused, naming the field.
    const short = await call(s.url, path, {
      session: member,
      body: { action: "accept", content: { name: "A" } },
    });
    expect(short.status).toBe(400);
    expect(await short.text()).toContain("name: at least 2 characters");

    const accepted = await call(s.url, path, {
      session: member,
      body: { action: "accept", content: { name: "Ada" } },
    });
    expect(accepted.status).toBe(200);
    await mine.next(runFrame(runId, "done"));
    // The default (age 30) was applied; the tool's result carries the answer, the note what happened.
    expect(await answerText(s, member, group.id, runId)).toBe(
      'hello Ada, age 30 | asked the person for input ("What should I call you?"): accept',
    );
    expect(mine.frames.some((f) => f.type === "elicitation_closed" && f.id === request.id)).toBe(true);
    // The owner saw the run but never the request.
    expect(admins.frames.some((f) => f.type === "elicitation" || f.type === "elicitation_closed")).toBe(
      false,
    );
    expect(admins.frames.some((f) => f.type === "run" && (f.run as { id: string }).id === runId)).toBe(true);
    // Answered once: a second answer finds nothing.
    expect((await call(s.url, path, { session: member, body: { action: "decline" } })).status).toBe(404);

    const { runId: secondRun, request: asked } = await askThrough(
      s,
      member,
      mine,
      group.id,
      "feat_ask_name",
      "again",
    );
    expect(await answer(s, member, secondRun, asked.id, { action: "decline" })).toBe(200);
    await mine.next(runFrame(secondRun, "done"));
    expect(await answerText(s, member, group.id, secondRun)).toBe(
      'no name (decline) | asked the person for input ("What should I call you?"): decline (the person chose decline)',
    );

    // URL mode: the page to open; "Done" accepts.
    const { runId: linkRun, request: link } = await askThrough(
      s,
      member,
      mine,
      group.id,
      "web_link_account",
      "link it",
    );
    expect(link).toMatchObject({
      server: "web",
      mode: "url",
      url: "https://accounts.example.test/link?session=abc",
      message: "Link your account to continue.",
    });
    expect(await answer(s, member, linkRun, link.id, { action: "accept" })).toBe(200);
    await mine.next(runFrame(linkRun, "done"));
    expect(await answerText(s, member, group.id, linkRun)).toBe(
      'link accept | asked the person for input ("Link your account to continue."): accept',
    );

    // Stopping the run withdraws its open question.
    const { runId: thirdRun, request: open } = await askThrough(
      s,
      member,
      mine,
      group.id,
      "feat_ask_name",
      "once more",
    );
    expect(
      (await call(s.url, `/api/runs/${thirdRun}/cancel`, { session: member, method: "POST" })).status,
    ).toBe(200);
    const withdrawn = await mine.next((f) => f.type === "elicitation_closed" && f.id === open.id);
    expect(withdrawn.action).toBe("cancel");
    await mine.next(runFrame(thirdRun, "cancelled"));
    // The stopped run never took its last scripted turn.
    scripts.clear();
    mine.ws.close();
    admins.ws.close();
  });

  it("puts a called agent's request for input to the person the outer run acts for", async () => {
    const s = await startWithAsker();
    const { owner, users } = await withUsers(s.url, ["member"]);
    const member = users.member as Session;
    const group = await groupWith(s, owner, member);
    const mine = await openSocket(s, member);
    await follow(mine, group.id);
    scripts.add(
      "assistant",
      { toolCalls: [{ name: "call_agent", args: { agentId: "coder", task: "greet the person" } }] },
      sayToolResult,
    );
    scripts.add("coder", { toolCalls: [{ name: "feat_ask_name", args: {} }] }, sayToolResult);
    const posted = await expectJson<PostResult>(
      await call(s.url, `/api/channels/${group.id}/messages`, { session: member, body: { text: "hi" } }),
      201,
    );
    const outer = posted.runs[0]?.id as string;
    const frame = await mine.next((f) => f.type === "elicitation");
    const request = frame.request as ElicitationView;
    // Asked by the nested run, shown in the outer run's answer.
    expect(request.runId).not.toBe(outer);
    expect(request).toMatchObject({ shownIn: outer, userId: member.userId, server: "feat" });
    const path = `/api/runs/${request.runId}/elicitations/${request.id}`;
    expect((await call(s.url, path, { session: owner, body: { action: "decline" } })).status).toBe(404);
    const accepted = await call(s.url, path, {
      session: member,
      body: { action: "accept", content: { name: "Ada" } },
    });
    expect(accepted.status).toBe(200);
    await mine.next(runFrame(outer, "done"));
    // The tool got the answer, and the called agent's answer saying so came back to the outer agent.
    expect(await answerText(s, member, group.id, outer)).toMatch(/^hello Ada, age 30 \| /);
    mine.ws.close();
  });

  it("lists the servers' prompts for members and fills one in", async () => {
    const s = await startWithAsker();
    const { users } = await withUsers(s.url, ["member", "guest"]);
    const member = users.member as Session;
    const prompts = await expectJson<Array<{ server: string; name: string; arguments: unknown[] }>>(
      await call(s.url, "/api/mcp/prompts", { session: member }),
      200,
    );
    expect(prompts).toEqual([
      {
        server: "feat",
        name: "summarize",
        description: "Summarise a topic in one line.",
        arguments: [{ name: "topic", required: true }, { name: "style" }],
      },
    ]);
    const filled = await expectJson<{ text: string }>(
      await call(s.url, "/api/mcp/prompts/feat/summarize", {
        session: member,
        body: { arguments: { topic: "tea" } },
      }),
      200,
    );
    expect(filled.text).toBe("Summarise tea in one line.");
    // Guests use no MCP servers.
    expect((await call(s.url, "/api/mcp/prompts", { session: users.guest as Session })).status).toBe(403);
  });

  it("cancels when nobody answers in time, and declines when nobody is present", async () => {
    const s = await startWithAsker(200);
    const { owner, users } = await withUsers(s.url, ["member"]);
    const member = users.member as Session;
    const group = await groupWith(s, owner, member);
    const mine = await openSocket(s, member);
    await follow(mine, group.id);

    const { runId } = await askThrough(s, member, mine, group.id, "feat_ask_name", "greet me");
    await mine.next(runFrame(runId, "done"));
    expect(await answerText(s, member, group.id, runId)).toBe(
      'no name (cancel) | asked the person for input ("What should I call you?"): cancel (no answer within 200 ms)',
    );

    // A post made for the person without them at the chat (as a schedule's or a connector's).
    scripts.add("assistant", { toolCalls: [{ name: "feat_ask_name", args: {} }] }, sayToolResult);
    const scheduled = await s.team.postMessage(
      { userId: member.userId, role: "member" },
      group.id,
      "greet me",
    );
    const scheduledRun = scheduled.runs[0]?.id as string;
    await mine.next(runFrame(scheduledRun, "done"));
    expect(await answerText(s, member, group.id, scheduledRun)).toBe(
      'no name (decline) | declined the server\'s request for input ("What should I call you?"): this run has no one to ask (headless)',
    );
    expect(mine.frames.filter((f) => f.type === "elicitation")).toHaveLength(1);
    mine.ws.close();
  });
});
