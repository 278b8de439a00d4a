import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { cleanEnv, jsonLines, runCli } from "../support/cli.js";

let server: FakeLlmServer;
beforeAll(async () => {
  server = await startFakeLlmServer({ strict: true });
});
afterAll(async () => {
  await server.close();
});

it("answers from documents added with `dimsum kb add`, citing them, and never indexes SOUL.md", async () => {
  const env = cleanEnv({
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: `${server.url}/v1`,
    DIMSUM_MODEL: "openai:gpt-4o",
  });
  const docs = mkdtempSync(join(tmpdir(), "dimsum-docs-"));
  mkdirSync(join(docs, "handbook"));
  writeFileSync(
    join(docs, "handbook/leave.md"),
    "# Leave policy\n\n## Parental leave\n\nEmployees get 26 weeks of paid parental leave.\n",
  );
  writeFileSync(join(docs, "SOUL.md"), "You are a secret persona about parental leave.\n");
  const added = await runCli(["kb", "add", "hr", docs], { env });
  expect(added.code).toBe(0);

  server.enqueue(
    { toolCalls: [{ name: "rag_query", args: { query: "parental leave weeks", kb: "hr" } }] },
    { text: "26 weeks." },
  );
  const run = await runCli(
    ["run", "--json", "--user", "A", "--session", "hr", "How long is parental leave?"],
    { env },
  );
  expect(run.code).toBe(0);
  const result = jsonLines(run.stdout).find((e) => e.type === "tool_result");
  expect(result).toMatchObject({ name: "rag_query", ok: true });
  const output = String(result?.output);
  expect(output).toContain("26 weeks");
  expect(output).toContain("leave.md");
  expect(output).not.toContain("secret persona");
});
