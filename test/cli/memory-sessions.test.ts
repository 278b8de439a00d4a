import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { cleanEnv, jsonLines, runCli } from "../support/cli.js";

let server: FakeLlmServer;
beforeAll(async () => {
  server = await startFakeLlmServer({ strict: true });
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => server.reset());

it("carries a preference from session 1 into session 2 of the same user, never to another user", async () => {
  const env = cleanEnv({
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: `${server.url}/v1`,
    DIMSUM_MODEL: "openai:gpt-4o",
  });
  server.enqueue(
    {
      toolCalls: [
        {
          name: "memory_write",
          args: {
            text: "The user prefers metric units (kilometres, Celsius).",
            type: "procedural",
            importance: 8,
          },
        },
      ],
    },
    { text: "Noted: metric units from now on." },
  );
  const first = await runCli(
    ["run", "--json", "--user", "A", "--session", "one", "Please always use metric units."],
    { env },
  );
  expect(first.code).toBe(0);
  expect(jsonLines(first.stdout).find((e) => e.type === "tool_result")).toMatchObject({
    name: "memory_write",
    ok: true,
  });

  server.enqueue({ text: "It is about 10 km." });
  const second = await runCli(
    ["run", "--json", "--user", "A", "--session", "two", "How far is the walk in metric units?"],
    {
      env,
    },
  );
  expect(second.code).toBe(0);
  const body = server.requests.at(-1)?.body as { messages: unknown[] } | undefined;
  // Recalled memories travel in the turn context, with the newest user message.
  expect(JSON.stringify(body?.messages.at(-1))).toContain("prefers metric units");
  const context = jsonLines(second.stdout).find((e) => e.type === "context");
  expect(context).toMatchObject({ memoryMode: "bm25" });
  expect(context?.memories).toHaveLength(1);

  server.enqueue({ text: "Miles, then." });
  await runCli(["run", "--user", "B", "--session", "one", "How far is the walk in metric units?"], { env });
  expect(JSON.stringify(server.requests.at(-1)?.body)).not.toContain("prefers metric units");

  const listed = await runCli(["memory", "list", "--user", "A"], { env });
  expect(listed.stdout).toContain("prefers metric units");
  const chat = await runCli(["chat", "--user", "A", "--session", "three"], {
    env,
    input: "/memory metric\n",
  });
  expect(chat.stdout).toContain("prefers metric units");
  const other = await runCli(["memory", "list", "--user", "B"], { env });
  expect(other.stdout).not.toContain("metric");
});
