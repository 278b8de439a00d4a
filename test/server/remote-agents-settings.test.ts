/**
 * Settings → Remote agents over HTTP: an owner adds a remote A2A agent (an `@a2a-js/sdk` server
 * started here, on loopback, so the config allows private networks) and an agent's next run calls
 * it; its token is sealed at rest and in no response, log or model request; members get 403; a name
 * a2a.json or Settings already has is 409; removing it takes the tool out of the next run.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { RemoteAgentView } from "../../src/server/remote-agents.js";
import type { TeamRun } from "../../src/team/types.js";
import {
  type FakeLlmServer,
  type RecordedRequest,
  startFakeLlmServer,
} from "../../src/testing/fake-llm-server.js";
import { type RemoteA2aAgent, startRemoteA2aAgent } from "../support/a2a-remote-agent.js";
import { AgentScripts, lastToolResult } from "../team/harness.js";
import { call, type Session, withUsers } from "./helpers.js";
import { expectJson, startTeamServer, type TeamServer } from "./team-helpers.js";

const TOKEN = "remote-settings-token-987";
const scripts = new AgentScripts();
let llm: FakeLlmServer;
let remote: RemoteA2aAgent;

beforeAll(async () => {
  llm = await startFakeLlmServer({ defaultTurn: scripts.turn });
  remote = await startRemoteA2aAgent(TOKEN);
});
afterAll(async () => {
  await llm.close();
  await remote.close();
});
beforeEach(() => {
  llm.reset();
  scripts.clear();
  remote.asked.length = 0;
});

function toolNamesOf(request: RecordedRequest | undefined): string[] {
  const tools = ((request?.body ?? {}) as { tools?: Array<{ function: { name: string } }> }).tools ?? [];
  return tools.map((t) => t.function.name);
}

async function settled(s: TeamServer, owner: Session, runId: string): Promise<TeamRun> {
  for (;;) {
    const run = await expectJson<TeamRun>(await call(s.url, `/api/runs/${runId}`, { session: owner }), 200);
    if (run.status === "done" || run.status === "error") return run;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Posts `text` to a new direct chat with the assistant; returns the finished run. */
async function ask(s: TeamServer, owner: Session, text: string): Promise<TeamRun> {
  const channel = await expectJson<{ id: string }>(
    await call(s.url, "/api/channels", {
      session: owner,
      body: { kind: "direct", name: "a", leaderAgentId: "assistant", agentIds: ["assistant"], userIds: [] },
    }),
    201,
  );
  const posted = await expectJson<{ runs: TeamRun[] }>(
    await call(s.url, `/api/channels/${channel.id}/messages`, { session: owner, body: { text } }),
    201,
  );
  return settled(s, owner, posted.runs[0]?.id ?? "");
}

const start = () =>
  startTeamServer({
    llmUrl: llm.url,
    configFile: { tools: { fetch: { allowPrivateNetwork: true } } },
    a2a: { agents: { "from-file": { url: "https://a2a.example.com/agents/x", description: "Read-only" } } },
  });

describe("/api/remote-agents", () => {
  it("an agent added in Settings is called by the next run; removed, its tool is gone", async () => {
    const s = await start();
    const { owner, users } = await withUsers(s.url, ["member"]);
    const agent = { name: "order-desk", url: remote.url, token: TOKEN, description: "Knows every order." };

    const forbidden = await call(s.url, "/api/remote-agents", { session: users.member, body: agent });
    expect(forbidden.status).toBe(403);
    expect((await call(s.url, "/api/remote-agents", { session: users.member })).status).toBe(403);

    const added = await call(s.url, "/api/remote-agents", { session: owner, body: agent });
    const addedText = await added.text();
    expect(added.status).toBe(201);
    expect(addedText).not.toContain(TOKEN);
    expect(JSON.parse(addedText)).toEqual({
      name: "order-desk",
      url: remote.url,
      description: "Knows every order.",
      hasToken: true,
      enabled: true,
      source: "settings",
      removable: true,
    });
    const listed = await call(s.url, "/api/remote-agents", { session: owner });
    const listedText = await listed.text();
    expect(listedText).not.toContain(TOKEN);
    expect((JSON.parse(listedText) as RemoteAgentView[]).map((r) => [r.name, r.source, r.removable])).toEqual(
      [
        ["from-file", "a2a.json", false],
        ["order-desk", "settings", true],
      ],
    );
    // Sealed at rest.
    const row = s.db.prepare("SELECT value_json FROM server_settings WHERE key = 'remoteAgents'").get() as {
      value_json: string;
    };
    expect(row.value_json).toContain("order-desk");
    expect(row.value_json).not.toContain(TOKEN);

    // The check reads the card with the token.
    const check = await expectJson<{ ok: boolean; card?: { name: string } }>(
      await call(s.url, "/api/remote-agents/order-desk/check", { session: owner, method: "POST" }),
      200,
    );
    expect(check, JSON.stringify(check)).toMatchObject({ ok: true, card: { name: "Remote Helper" } });

    // No restart: the next run has the tool, and calling it reaches the remote agent with the token.
    scripts.add(
      "assistant",
      { toolCalls: [{ name: "a2a_order_desk", args: { task: "where is order 42?" } }] },
      (request) => ({ text: `Desk: ${lastToolResult(request)}` }),
    );
    const run = await ask(s, owner, "where is my order?");
    expect(run.status).toBe("done");
    expect(toolNamesOf(llm.requests[0])).toEqual(expect.arrayContaining(["a2a_order_desk", "a2a_from_file"]));
    expect(remote.asked).toEqual(["where is order 42?"]);
    expect(remote.authorizations.at(-1)).toBe(`Bearer ${TOKEN}`);
    expect(lastToolResult(llm.requests.at(-1))).toBe("Remote says: where is order 42?");
    expect(JSON.stringify(llm.requests)).not.toContain(TOKEN);

    // Changed in place: a wrong token is refused by the remote agent; turned off, runs are not offered it.
    const patch = (body: unknown, session = owner, name = "order-desk") =>
      call(s.url, `/api/remote-agents/${name}`, { session, method: "PATCH", body });
    expect((await patch({ enabled: false }, users.member as Session)).status).toBe(403);
    expect((await patch({})).status).toBe(400);
    expect((await patch({ enabled: false }, owner, "from-file")).status).toBe(409);
    expect((await patch({ enabled: false }, owner, "nobody")).status).toBe(404);
    expect((await patch({ url: "ftp://x.example.com/a" })).status).toBe(400);
    const changed = await patch({ token: "another-token-555", description: null });
    const changedText = await changed.text();
    expect(changed.status).toBe(200);
    expect(changedText).not.toContain("another-token-555");
    expect(JSON.parse(changedText)).toMatchObject({ name: "order-desk", hasToken: true, enabled: true });
    expect(JSON.parse(changedText).description).toBeNull();
    const checked = await expectJson<{ ok: boolean }>(
      await call(s.url, "/api/remote-agents/order-desk/check", { session: owner, method: "POST" }),
      200,
    );
    expect(checked.ok).toBe(false);
    expect(remote.authorizations.at(-1)).toBe("Bearer another-token-555");
    expect((await patch({ token: TOKEN, enabled: false })).status).toBe(200);
    llm.reset();
    await ask(s, owner, "anyone there?");
    expect(toolNamesOf(llm.requests[0])).not.toContain("a2a_order_desk");
    expect((await patch({ enabled: true })).status).toBe(200);
    llm.reset();
    await ask(s, owner, "and now?");
    expect(toolNamesOf(llm.requests[0])).toContain("a2a_order_desk");

    expect(
      (await call(s.url, "/api/remote-agents/order-desk", { session: users.member, method: "DELETE" }))
        .status,
    ).toBe(403);
    expect(
      (await call(s.url, "/api/remote-agents/order-desk", { session: owner, method: "DELETE" })).status,
    ).toBe(204);
    expect(
      (await call(s.url, "/api/remote-agents/order-desk", { session: owner, method: "DELETE" })).status,
    ).toBe(404);
    llm.reset();
    const after = await ask(s, owner, "anything new?");
    expect(after.status).toBe("done");
    const offered = toolNamesOf(llm.requests[0]);
    expect(offered).toContain("a2a_from_file");
    expect(offered).not.toContain("a2a_order_desk");
    expect(s.log.lines.join("\n")).not.toContain(TOKEN);
  }, 60_000);

  it("refuses clashing names (409), bad names and URLs (400), and removing a2a.json's agents", async () => {
    // a2a.json is the operator's own file: its URLs are not checked (nothing listens on port 9).
    const s = await startTeamServer({
      llmUrl: llm.url,
      a2a: { agents: { "from-file": { url: "http://127.0.0.1:9/agents/x" } } },
    });
    const { owner } = await withUsers(s.url);
    const refuse = async (body: unknown, status: number) => {
      const res = await call(s.url, "/api/remote-agents", { session: owner, body });
      expect(res.status).toBe(status);
      return (
        (await res.json()) as { error: { message: string; hint?: string; issues?: Array<{ path: string }> } }
      ).error;
    };
    expect((await refuse({ name: "from-file", url: "https://8.8.8.8/a2a/y" }, 409)).message).toContain(
      "a2a.json",
    );
    // One tool name (`a2a_from_file`): a clash too.
    expect((await refuse({ name: "from_file", url: "https://8.8.8.8/a2a/y" }, 409)).message).toContain(
      "a2a.json",
    );
    expect((await refuse({ name: "Bad Name!", url: "https://8.8.8.8/a2a/y" }, 400)).issues?.[0]?.path).toBe(
      "name",
    );
    expect((await refuse({ name: "ok", url: "ftp://a2a.example.com/y" }, 400)).message).toContain(
      "not an http(s) URL",
    );
    // Loopback is refused unless the config allows private networks, as for remote MCP servers.
    const loopback = await refuse({ name: "ok", url: remote.url }, 400);
    expect(loopback.message).toMatch(/^A2A agent URL .* is refused: 127\.0\.0\.1 is a \w+ address/);
    expect(JSON.stringify(loopback)).toContain("tools.fetch.allowPrivateNetwork");

    const fine = { name: "ok", url: "https://8.8.8.8/a2a/y", token: "t-1" };
    expect((await call(s.url, "/api/remote-agents", { session: owner, body: fine })).status).toBe(201);
    expect((await refuse(fine, 409)).message).toContain('"ok" already exists');

    const fromFile = await call(s.url, "/api/remote-agents/from-file", { session: owner, method: "DELETE" });
    expect(fromFile.status).toBe(409);
    expect(await fromFile.text()).toContain("a2a.json");

    // A check of an unreachable agent is a report naming the reason, not a server error.
    const check = await expectJson<{ ok: boolean; error?: { message: string } }>(
      await call(s.url, "/api/remote-agents/from-file/check", { session: owner, method: "POST" }),
      200,
    );
    expect(check.ok).toBe(false);
    expect(check.error?.message).toContain('The A2A agent "from-file"');
  }, 60_000);
});
