/**
 * Settings → HTTP tools over HTTP: an owner adds an HTTP tool (the seed's format, against a server
 * started here on loopback, so the config allows private networks) and the very next run calls it, no
 * restart; its header value (an API key) is sealed at rest and in no response, log or model request;
 * members get 403; bad definitions are 400 with the problem named; file tools are listed read-only;
 * edits and removal apply to the next run. (Hints come in the error's message, after the problem.)
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { HttpToolView } from "../../src/server/http-tools.js";
import type { TeamRun } from "../../src/team/types.js";
import {
  type FakeLlmServer,
  type RecordedRequest,
  startFakeLlmServer,
} from "../../src/testing/fake-llm-server.js";
import { AgentScripts, lastToolResult } from "../team/harness.js";
import { sendJson, startServer, type TestServer } from "../tools/http/helpers.js";
import { call, type Session, withUsers } from "./helpers.js";
import { expectJson, startTeamServer, type TeamServer } from "./team-helpers.js";

const API_KEY = "http-tool-secret-key-4711";
const scripts = new AgentScripts();
let llm: FakeLlmServer;
let api: TestServer;

beforeAll(async () => {
  llm = await startFakeLlmServer({ defaultTurn: scripts.turn });
  api = await startServer((req, res) => {
    if (req.headers["x-api-key"] !== API_KEY) return sendJson(res, 401, { error: "bad key" });
    sendJson(res, 200, { city: new URL(req.url, "http://x").searchParams.get("city"), temp: 21 });
  });
});
afterAll(async () => {
  await llm.close();
  await api.close();
});
beforeEach(() => {
  llm.reset();
  scripts.clear();
  api.requests.length = 0;
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

const weather = () => ({
  name: "city_weather",
  description: "The weather of a city.",
  url: `${api.base}/weather`,
  query: { city: "{{city}}" },
  headers: { "X-Api-Key": API_KEY },
  parameters: [{ name: "city", type: "string", required: true, description: "The city" }],
});

describe("/api/http-tools", () => {
  it("a tool added in Settings is called by the next run; edited and removed, the next run follows", async () => {
    const s = await startTeamServer({
      llmUrl: llm.url,
      configFile: {
        tools: { fetch: { allowPrivateNetwork: true } },
        httpTools: [{ name: "from_config", description: "Read-only", url: "https://api.example.com/x" }],
      },
    });
    const { owner, users } = await withUsers(s.url, ["member"]);

    // Members may neither see nor change them.
    expect((await call(s.url, "/api/http-tools", { session: users.member })).status).toBe(403);
    expect((await call(s.url, "/api/http-tools", { session: users.member, body: weather() })).status).toBe(
      403,
    );

    // Before: not offered.
    scripts.add("assistant", { text: "nothing yet" });
    await ask(s, owner, "hello");
    expect(toolNamesOf(llm.requests[0])).not.toContain("city_weather");

    const added = await call(s.url, "/api/http-tools", { session: owner, body: weather() });
    const addedText = await added.text();
    expect(added.status, addedText).toBe(201);
    expect(addedText).not.toContain(API_KEY);
    expect(JSON.parse(addedText)).toMatchObject({
      name: "city_weather",
      source: "settings",
      editable: true,
      enabled: true,
      headerNames: ["X-Api-Key"],
    });
    const listedText = await (await call(s.url, "/api/http-tools", { session: owner })).text();
    expect(listedText).not.toContain(API_KEY);
    const listed = JSON.parse(listedText) as HttpToolView[];
    expect(listed.find((t) => t.name === "from_config")).toMatchObject({ source: "file", editable: false });
    expect(listed.find((t) => t.name === "city_weather")).toMatchObject({ source: "settings" });
    const row = s.db.prepare("SELECT value_json FROM server_settings WHERE key = 'httpTools'").get() as {
      value_json: string;
    };
    expect(row.value_json).toContain("city_weather");
    expect(row.value_json).not.toContain(API_KEY);

    // No restart: the next run is offered the tool and its call reaches the API with the key.
    llm.reset();
    scripts.add(
      "assistant",
      { toolCalls: [{ name: "city_weather", args: { city: "Lyon" } }] },
      (request) => ({
        text: `Weather: ${lastToolResult(request)}`,
      }),
    );
    const run = await ask(s, owner, "weather in Lyon?");
    expect(run.status).toBe("done");
    expect(toolNamesOf(llm.requests[0])).toEqual(expect.arrayContaining(["city_weather", "from_config"]));
    expect(api.requests.map((r) => r.url)).toEqual(["/weather?city=Lyon"]);
    expect(api.requests[0]?.headers["x-api-key"]).toBe(API_KEY);
    expect(lastToolResult(llm.requests.at(-1))).toContain("Lyon");
    expect(JSON.stringify(llm.requests)).not.toContain(API_KEY);

    // Edited: a header value "" keeps the saved key; the new path is used by the next run.
    const patch = (body: unknown, session: Session = owner, name = "city_weather") =>
      call(s.url, `/api/http-tools/${name}`, { session, method: "PATCH", body });
    expect((await patch({ enabled: false }, users.member as Session)).status).toBe(403);
    expect((await patch({})).status).toBe(400);
    expect((await patch({ enabled: false }, owner, "from_config")).status).toBe(409);
    expect((await patch({ enabled: false }, owner, "nobody")).status).toBe(404);
    const edited = await patch({
      definition: { ...weather(), url: `${api.base}/weather/v2`, headers: { "X-Api-Key": "" } },
    });
    const editedText = await edited.text();
    expect(edited.status, editedText).toBe(200);
    expect(editedText).not.toContain(API_KEY);
    llm.reset();
    api.requests.length = 0;
    scripts.add(
      "assistant",
      { toolCalls: [{ name: "city_weather", args: { city: "Oslo" } }] },
      (request) => ({
        text: `Weather: ${lastToolResult(request)}`,
      }),
    );
    await ask(s, owner, "weather in Oslo?");
    expect(api.requests.map((r) => [r.url, r.headers["x-api-key"]])).toEqual([
      ["/weather/v2?city=Oslo", API_KEY],
    ]);

    // Turned off, then removed: the next run is not offered it.
    expect((await patch({ enabled: false })).status).toBe(200);
    llm.reset();
    scripts.add("assistant", { text: "ok" });
    await ask(s, owner, "anyone?");
    expect(toolNamesOf(llm.requests[0])).not.toContain("city_weather");
    expect((await patch({ enabled: true })).status).toBe(200);
    const del = (session: Session) =>
      call(s.url, "/api/http-tools/city_weather", { session, method: "DELETE" });
    expect((await del(users.member as Session)).status).toBe(403);
    expect((await del(owner)).status).toBe(204);
    expect((await del(owner)).status).toBe(404);
    llm.reset();
    scripts.add("assistant", { text: "ok" });
    await ask(s, owner, "and now?");
    const offered = toolNamesOf(llm.requests[0]);
    expect(offered).toContain("from_config");
    expect(offered).not.toContain("city_weather");
    expect(s.log.lines.join("\n")).not.toContain(API_KEY);
  }, 60_000);

  it("refuses bad definitions (400, the problem named), env reads, and clashes (409)", async () => {
    const s = await startTeamServer({
      llmUrl: llm.url,
      configFile: {
        httpTools: [{ name: "from_config", description: "x", url: "https://api.example.com/x" }],
      },
    });
    const { owner } = await withUsers(s.url);
    const refuse = async (body: unknown, status: number) => {
      const res = await call(s.url, "/api/http-tools", { session: owner, body });
      expect(res.status).toBe(status);
      return ((await res.json()) as { error: { message: string } }).error;
    };
    expect((await refuse({ ...weather(), url: "ftp://x.example.com" }, 400)).message).toContain("http://");
    expect((await refuse({ ...weather(), query: { city: "{{town}}" } }, 400)).message).toContain("town");
    expect(
      (await refuse({ ...weather(), parameters: [{ name: "city", type: "text" }] }, 400)).message,
    ).toContain("parameters.0.type");
    const env = await refuse({ ...weather(), headers: { "X-Api-Key": "{{env.DIMSUM_SECRET_KEY}}" } }, 400);
    expect(env.message).toContain("environment");
    expect(env.message).toContain("header value");
    expect((await refuse({ ...weather(), allowPrivateNetwork: true }, 400)).message).toContain(
      "tools.fetch.allowPrivateNetwork",
    );
    expect((await refuse({ ...weather(), name: "from_config" }, 409)).message).toContain("tools/http");
    expect((await call(s.url, "/api/http-tools", { session: owner, body: weather() })).status).toBe(201);
    expect((await refuse(weather(), 409)).message).toContain("already exists");
  }, 60_000);
});
