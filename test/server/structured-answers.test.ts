/**
 * Answers held to a JSON Schema on the server: the official `openai` SDK sends `response_format` to
 * `/v1` (streamed and not), and an agent's answer format shapes its answers in a chat.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { AgentScripts } from "../team/harness.js";
import { call, withUsers } from "./helpers.js";
import { expectJson, startTeamServer } from "./team-helpers.js";

let llm: FakeLlmServer;
const scripts = new AgentScripts();

beforeAll(async () => {
  llm = await startFakeLlmServer({ defaultTurn: scripts.turn });
});
afterAll(async () => {
  await llm.close();
});
beforeEach(() => {
  llm.reset();
  scripts.clear();
});

const RECIPE = {
  type: "object",
  properties: { dish: { type: "string" }, minutes: { type: "integer", minimum: 1 } },
  required: ["dish", "minutes"],
};

async function setUp() {
  const s = await startTeamServer({ llmUrl: llm.url });
  const { owner } = await withUsers(s.url, []);
  const { token } = await expectJson<{ token: string }>(
    await call(s.url, "/api/tokens", { session: owner, body: { name: "sdk" } }),
    201,
  );
  const client = new OpenAI({ apiKey: token, baseURL: `${s.url}/v1`, maxRetries: 0 });
  return { s, owner, client };
}

describe("structured answers", () => {
  it("answers the openai SDK's json_schema response_format with valid JSON, after a tool and a correction", async () => {
    const { client } = await setUp();
    scripts.add(
      "writer",
      { toolCalls: [{ name: "calculator", args: { expression: "15+5" } }] },
      { text: '{"dish": "har gow"}' },
      { text: '{"dish": "har gow", "minutes": 20}' },
    );
    const completion = await client.chat.completions.create({
      model: "writer",
      messages: [{ role: "user", content: "a recipe please" }],
      response_format: { type: "json_schema", json_schema: { name: "recipe", schema: RECIPE } },
    });
    expect(JSON.parse(completion.choices[0]?.message.content ?? "")).toEqual({
      dish: "har gow",
      minutes: 20,
    });
    // The model was asked natively, and the invalid answer went back once.
    const first = llm.requests[0]?.body as { response_format: { json_schema: { name: string } } };
    expect(first.response_format.json_schema.name).toBe("recipe");
    expect(llm.requests).toHaveLength(3);
    expect(JSON.stringify(llm.requests[2]?.body)).toContain("missing required property `minutes`");

    // Streamed: only the validated JSON is sent, never the invalid first try.
    scripts.add("writer", { text: "not json at all" }, { text: '{"dish": "siu mai", "minutes": 15}' });
    const stream = await client.chat.completions.create({
      model: "writer",
      messages: [{ role: "user", content: "another" }],
      response_format: { type: "json_schema", json_schema: { name: "recipe", schema: RECIPE } },
      stream: true,
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(JSON.parse(text)).toEqual({ dish: "siu mai", minutes: 15 });
  }, 60_000);

  it("refuses a response_format that is not a usable schema with 400, and reports an answer that stays invalid", async () => {
    const { client } = await setUp();
    const bad = client.chat.completions.create({
      model: "writer",
      messages: [{ role: "user", content: "hi" }],
      response_format: {
        type: "json_schema",
        json_schema: { name: "bad name!", schema: { type: "object" } },
      },
    });
    await expect(bad).rejects.toMatchObject({ status: 400 });
    scripts.add("writer", { text: "nope" }, { text: "still nope" });
    const invalid = client.chat.completions.create({
      model: "writer",
      messages: [{ role: "user", content: "hi" }],
      response_format: { type: "json_object" },
    });
    await expect(invalid).rejects.toMatchObject({ status: 502 });
  }, 60_000);

  it("holds an agent's chat answers to its answer format, and refuses a format that is not a schema", async () => {
    const { s, owner } = await setUp();
    const refused = await call(s.url, "/api/agents/writer", {
      session: owner,
      method: "PATCH",
      body: { answerFormat: { type: "object", properties: { a: { type: 12 } } } },
    });
    expect(refused.status).toBe(400);
    const saved = await expectJson<{ answerFormat: unknown }>(
      await call(s.url, "/api/agents/writer", {
        session: owner,
        method: "PATCH",
        body: { answerFormat: RECIPE },
      }),
      200,
    );
    expect(saved.answerFormat).toEqual(RECIPE);
    const channel = await expectJson<{ id: string }>(
      await call(s.url, "/api/channels", {
        session: owner,
        body: { kind: "direct", name: "recipes", leaderAgentId: "writer", agentIds: ["writer"] },
      }),
      201,
    );
    scripts.add("writer", { text: '{"dish": "cheung fun", "minutes": 12}' });
    await call(s.url, `/api/channels/${channel.id}/messages`, { session: owner, body: { text: "recipe?" } });
    let answer: { text: string } | undefined;
    for (let i = 0; i < 100 && !answer; i++) {
      const messages = await expectJson<
        Array<{ text: string; authorType?: string; author?: { type: string } }>
      >(await call(s.url, `/api/channels/${channel.id}/messages`, { session: owner }), 200);
      answer = messages.find((m) => m.text.includes("cheung fun"));
      if (!answer) await new Promise((r) => setTimeout(r, 100));
    }
    expect(answer?.text).toBe('```json\n{\n  "dish": "cheung fun",\n  "minutes": 12\n}\n```');
    expect(JSON.stringify(llm.requests[0]?.body)).toContain('"name":"answer"');
    // Cleared with null: free text again.
    const cleared = await expectJson<{ answerFormat?: unknown }>(
      await call(s.url, "/api/agents/writer", {
        session: owner,
        method: "PATCH",
        body: { answerFormat: null },
      }),
      200,
    );
    expect(cleared.answerFormat).toBeUndefined();
  }, 60_000);
});
