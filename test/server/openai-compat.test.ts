/**
 * The OpenAI-compatible endpoint, spoken to by Dimsum's own OpenAI adapter as the client (streaming)
 * and by raw requests: agents as models, API-token auth, OpenAI-shaped errors, disconnects abort.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openaiAdapter } from "../../src/llm/openai/index.js";
import { createStreamFunction } from "../../src/llm/stream.js";
import type { ModelEvent, ModelSpec } from "../../src/llm/types.js";
import type { Team } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { AgentScripts, agentOf, lastUserText, messagesOf, systemOf } from "../team/harness.js";
import { call, type Session, withUsers } from "./helpers.js";
import { expectJson, startTeamServer, type TeamServer, type TeamServerOptions } from "./team-helpers.js";

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

async function setUp(
  options: TeamServerOptions = {},
): Promise<{ s: TeamServer; owner: Session; token: string; guestToken: string }> {
  const s = await startTeamServer({ llmUrl: llm.url, ...options });
  const { owner, users } = await withUsers(s.url, ["guest"]);
  const created = await expectJson<{ token: string }>(
    await call(s.url, "/api/tokens", { session: owner, body: { name: "my script" } }),
    201,
  );
  const guestToken = await expectJson<{ token: string }>(
    await call(s.url, "/api/tokens", { session: users.guest!, body: { name: "guest script" } }),
    201,
  );
  return { s, owner, token: created.token, guestToken: guestToken.token };
}

function completions(url: string, token: string | undefined, body: unknown, signal?: AbortSignal) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  return fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

/** The `data:` payloads of an SSE body. */
function sseData(text: string): string[] {
  return text
    .split("\n\n")
    .map((event) => event.trim())
    .filter((event) => event.startsWith("data: "))
    .map((event) => event.slice("data: ".length));
}

type OpenAiErrorBody = { error: { message: string; type: string; code: string } };

describe("POST /v1/chat/completions", () => {
  it("streams an agent's answer to Dimsum's own OpenAI client, with usage", async () => {
    const { s, token } = await setUp();
    scripts.add("writer", { text: "Dumplings are folded by hand.", usage: { input: 40, output: 7 } });
    const spec: ModelSpec = {
      provider: "dimsum",
      id: "writer",
      protocol: "openai",
      baseUrl: `${s.url}/v1`,
      apiKey: token,
      contextWindow: 8000,
    };
    const stream = createStreamFunction(openaiAdapter);
    const events: ModelEvent[] = [];
    for await (const event of stream(
      spec,
      {
        system: "Answer in one sentence.",
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: [{ type: "text", text: "hello!" }] },
          { role: "user", content: "How are dumplings made?" },
        ],
      },
      { retry: { maxRetries: 0 } },
    )) {
      events.push(event);
    }
    expect(events.find((e) => e.type === "error")).toBeUndefined();
    const text = events.flatMap((e) => (e.type === "text_delta" ? [e.text] : [])).join("");
    expect(text).toBe("Dumplings are folded by hand.");
    const done = events.at(-1);
    expect(done).toMatchObject({ type: "done", finishReason: "stop" });
    expect(done?.type === "done" ? done.usage : undefined).toMatchObject({
      inputTokens: 40,
      outputTokens: 7,
    });

    // The agent ran with its persona, the caller's system text and the earlier turns.
    expect(llm.requests.map(agentOf)).toEqual(["writer"]);
    expect(systemOf(llm.requests[0])).toContain("Answer in one sentence.");
    expect(lastUserText(llm.requests[0])).toBe("How are dumplings made?");
    expect(JSON.stringify(messagesOf(llm.requests[0]))).toContain("hello!");
  });

  it("sends role, content, stop and usage chunks, then [DONE]", async () => {
    const { s, token } = await setUp();
    scripts.add("coder", { text: "print('hi')", usage: { input: 12, output: 4 } });
    const res = await completions(s.url, token, {
      model: "coder",
      messages: [{ role: "user", content: [{ type: "text", text: "say hi in Python" }] }],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const data = sseData(await res.text());
    expect(data.at(-1)).toBe("[DONE]");
    const chunks = data.slice(0, -1).map(
      (d) =>
        JSON.parse(d) as {
          id: string;
          object: string;
          model: string;
          choices: Array<{ delta: { role?: string; content?: string }; finish_reason: string | null }>;
          usage: unknown;
        },
    );
    expect(new Set(chunks.map((c) => c.object))).toEqual(new Set(["chat.completion.chunk"]));
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks[0]?.choices[0]?.delta.role).toBe("assistant");
    const content = chunks.flatMap((c) => c.choices.map((choice) => choice.delta.content ?? "")).join("");
    expect(content).toBe("print('hi')");
    const stop = chunks.at(-2);
    expect(stop?.choices[0]).toMatchObject({ delta: {}, finish_reason: "stop" });
    expect(chunks.at(-1)).toMatchObject({
      model: "coder",
      choices: [],
      usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 },
    });
  });

  it("answers one chat.completion object without streaming", async () => {
    const { s, token } = await setUp();
    scripts.add("editor", { text: "Polished.", usage: { input: 9, output: 2 } });
    const res = await completions(s.url, token, {
      model: "editor",
      messages: [
        { role: "developer", content: "Be terse." },
        { role: "user", content: "polish this" },
      ],
    });
    const body = await expectJson<{
      object: string;
      model: string;
      choices: Array<{ message: { role: string; content: string }; finish_reason: string }>;
      usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
    }>(res, 200);
    expect(body).toMatchObject({
      object: "chat.completion",
      model: "editor",
      choices: [{ message: { role: "assistant", content: "Polished." }, finish_reason: "stop" }],
      usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 },
    });
    expect(systemOf(llm.requests[0])).toContain("Be terse.");
  });

  it("refuses bad tokens (401), unknown models (404), guests (403) and bad bodies (400) in OpenAI's shape", async () => {
    const { s, owner, token, guestToken } = await setUp();
    const ask = { model: "writer", messages: [{ role: "user", content: "hi" }] };

    const missing = await expectJson<OpenAiErrorBody>(await completions(s.url, undefined, ask), 401);
    expect(missing.error).toMatchObject({ type: "invalid_request_error", code: "invalid_api_key" });
    expect((await completions(s.url, "dsk_not-a-real-token", ask)).status).toBe(401);
    // A login session token is not an API token.
    expect((await completions(s.url, owner.token, ask)).status).toBe(401);

    const unknown = await expectJson<OpenAiErrorBody>(
      await completions(s.url, token, { ...ask, model: "gpt-4o" }),
      404,
    );
    expect(unknown.error).toMatchObject({ type: "invalid_request_error", code: "model_not_found" });
    expect(unknown.error.message).toContain("gpt-4o");
    expect((await completions(s.url, guestToken, ask)).status).toBe(403);

    const empty = await expectJson<OpenAiErrorBody>(
      await completions(s.url, token, { model: "writer", messages: [] }),
      400,
    );
    expect(empty.error.type).toBe("invalid_request_error");
    expect(empty.error.message).toContain("messages");
    const endsWithAssistant = await completions(s.url, token, {
      model: "writer",
      messages: [{ role: "assistant", content: "hi" }],
    });
    expect(endsWithAssistant.status).toBe(400);
    const toolTurn = await completions(s.url, token, {
      model: "writer",
      messages: [
        { role: "tool", content: "42", tool_call_id: "x" },
        { role: "user", content: "hi" },
      ],
    });
    expect(toolTurn.status).toBe(400);
    expect(llm.requests).toHaveLength(0);
  });

  it("refuses messages without text and empty conversations, and never runs the agent on them", async () => {
    const { s, token } = await setUp();
    const cases: Array<[string, unknown, RegExp]> = [
      ["no content", [{ role: "user" }], /message 0 \(user\) has no content/],
      ["null content", [{ role: "user", content: null }], /has no content/],
      ["empty content", [{ role: "user", content: "" }], /message 0 \(user\) has empty content/],
      ["blank content", [{ role: "user", content: "  \n " }], /has empty content/],
      ["parts without text", [{ role: "user", content: [{ type: "text" }] }], /has empty content/],
      ["empty parts", [{ role: "user", content: [] }], /has empty content/],
      ["a number", [{ role: "user", content: 42 }], /content must be a string or an array of text parts/],
      ["an object", [{ role: "user", content: { text: "hi" } }], /content must be a string or an array/],
      [
        "an empty earlier message",
        [
          { role: "user", content: "" },
          { role: "assistant", content: "ok" },
          { role: "user", content: "hi" },
        ],
        /message 0 \(user\) has empty content/,
      ],
      ["an empty conversation", [], /conversation is empty/],
      ["only a system message", [{ role: "system", content: "be brief" }], /must end with a user message/],
    ];
    for (const [name, messages, message] of cases) {
      for (const stream of [false, true]) {
        const res = await completions(s.url, token, { model: "writer", messages, stream });
        const body = await expectJson<OpenAiErrorBody>(res, 400);
        expect(body.error.type, name).toBe("invalid_request_error");
        expect(body.error.message, name).toMatch(message);
      }
    }
    expect(llm.requests).toHaveLength(0);
  });

  it("answers an unexpected failure with a 500 that shows no internals, streamed or not", async () => {
    const broken = (team: Team): Team => ({
      ...team,
      complete: async () => {
        throw new Error("secret internals at /srv/dimsum/store.ts:42");
      },
    });
    const { s, token } = await setUp({ wrap: broken });
    const ask = { model: "writer", messages: [{ role: "user", content: "hi" }] };
    const plain = await completions(s.url, token, ask);
    const text = await plain.text();
    expect(plain.status).toBe(500);
    expect(JSON.parse(text)).toMatchObject({ error: { type: "server_error", code: "internal" } });
    expect(text).not.toContain("secret");
    const streamed = await (await completions(s.url, token, { ...ask, stream: true })).text();
    expect(streamed).toContain("internal server error");
    expect(streamed).not.toContain("secret");
    const logged = s.log.lines.filter((l) => l.startsWith("error:"));
    expect(logged).toHaveLength(2);
    expect(logged.every((l) => l.includes("secret internals"))).toBe(true);
  });

  it("reports a server without a model as a 503 naming the setting to fix", async () => {
    const { s, token } = await setUp({ llmUrl: "" });
    const res = await completions(s.url, token, {
      model: "writer",
      messages: [{ role: "user", content: "hi" }],
    });
    const body = await expectJson<OpenAiErrorBody>(res, 503);
    expect(body.error.message).toContain("no model chosen");
    expect(body.error.message).toContain("DIMSUM_MODEL");
  });

  it("aborts the agent's run when the client goes away", async () => {
    const outcomes: unknown[] = [];
    const observe = (team: Team): Team => ({
      ...team,
      complete: (...args) =>
        team.complete(...args).catch((err: unknown) => {
          outcomes.push(err);
          throw err;
        }),
    });
    const { s, token } = await setUp({ wrap: observe });
    let started!: () => void;
    const inFlight = new Promise<void>((resolve) => {
      started = resolve;
    });
    scripts.add("coder", async () => {
      started();
      return { delayMs: 60_000, text: "too late" };
    });
    const client = new AbortController();
    const res = await completions(
      s.url,
      token,
      { model: "coder", messages: [{ role: "user", content: "take your time" }], stream: true },
      client.signal,
    );
    expect(res.status).toBe(200);
    await inFlight;
    client.abort();
    while (outcomes.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(outcomes[0]).toMatchObject({ code: "aborted" });
  });
});

describe("GET /v1/models", () => {
  it("lists the agents as models for an API token", async () => {
    const { s, token } = await setUp();
    const list = await expectJson<{
      object: string;
      data: Array<{ id: string; object: string; owned_by: string }>;
    }>(await fetch(`${s.url}/v1/models`, { headers: { authorization: `Bearer ${token}` } }), 200);
    expect(list.object).toBe("list");
    expect(list.data.map((m) => m.id)).toEqual(
      expect.arrayContaining(["assistant", "coder", "writer", "editor"]),
    );
    expect(list.data[0]).toMatchObject({ object: "model", owned_by: "dimsum" });
    expect((await fetch(`${s.url}/v1/models`)).status).toBe(401);
  });
});
