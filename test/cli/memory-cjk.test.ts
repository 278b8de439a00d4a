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

it("finds a Chinese memory from a natural question through `dimsum memory search` and injects it into a run", async () => {
  const env = cleanEnv({
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: `${server.url}/v1`,
    DIMSUM_MODEL: "openai:gpt-4o",
  });
  const added = await runCli(["memory", "add", "--user", "C", "用户喜欢喝乌龙茶，不喝咖啡"], { env });
  expect(added).toMatchObject({ code: 0, stdout: "added #1\n" });
  await runCli(["memory", "add", "--user", "C", "用户住在上海浦东，平时坐地铁上班"], { env });

  const search = await runCli(["memory", "search", "--user", "C", "我应该喝什么茶？"], { env });
  expect(search.code).toBe(0);
  expect(search.stdout).toMatch(/^mode: bm25\n#1 .*用户喜欢喝乌龙茶，不喝咖啡\n$/);
  const none = await runCli(["memory", "search", "--user", "C", "今天股市怎么样？"], { env });
  expect(none.stdout).toBe("mode: bm25\nno memory matched\n");

  server.enqueue({ text: "乌龙茶。" });
  const run = await runCli(["run", "--json", "--user", "C", "--session", "tea", "我应该喝什么茶？"], { env });
  expect(run.code).toBe(0);
  const body = server.requests.at(-1)?.body as { messages: unknown[] } | undefined;
  // Recalled memories travel in the turn context, with the newest user message (the system prompt stays stable).
  expect(JSON.stringify(body?.messages.at(-1))).toContain("用户喜欢喝乌龙茶，不喝咖啡");
  expect(JSON.stringify(body)).not.toContain("上海浦东");
  expect(JSON.stringify(body?.messages[0])).not.toContain("用户喜欢喝乌龙茶");
  const context = jsonLines(run.stdout).find((e) => e.type === "context");
  expect(context?.memories).toHaveLength(1);
});
