import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  type FakeLlmServer,
  type RecordedRequest,
  startFakeLlmServer,
} from "../../src/testing/fake-llm-server.js";
import { cleanEnv, jsonLines, runCli } from "../support/cli.js";
import { projectRoot } from "../support/fixtures.js";

let server: FakeLlmServer;
beforeAll(async () => {
  server = await startFakeLlmServer({ strict: true });
});
afterAll(async () => {
  await server.close();
});

type OpenAiMessage = { role: string; tool_calls?: Array<{ id: string }>; tool_call_id?: string };

it("survives SIGKILL in the middle of a tool round: consistent history and a working next turn", async () => {
  const env = cleanEnv({
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: `${server.url}/v1`,
    DIMSUM_MODEL: "openai:gpt-4o",
  });
  server.enqueue(
    { toolCalls: [{ name: "calculator", args: { expression: "20+1" }, id: "call_calc" }] },
    { toolCalls: [{ name: "execute_command", args: { command: "sleep 30" }, id: "call_sleep" }] },
  );
  const child = spawn(
    process.execPath,
    [join(projectRoot, "bin/dimsum.js"), "run", "--json", "--user", "A", "--session", "s1", "work hard"],
    {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no sleep call seen; output: ${out}`)), 15_000);
    child.stdout.on("data", (chunk) => {
      out += chunk;
      if (out.includes('"name":"execute_command"')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  child.kill("SIGKILL");
  await new Promise((resolve) => child.on("close", resolve));
  const firstRunId = String(jsonLines(out)[0]?.runId);

  server.reset();
  server.enqueue({ text: "resumed fine" });
  const next = await runCli(["run", "--json", "--user", "A", "--session", "s1", "are you there?"], { env });
  expect(next.code).toBe(0);
  expect(jsonLines(next.stdout).at(-1)).toMatchObject({ type: "done", answer: "resumed fine" });
  expect(next.stderr).toContain(`closed interrupted run ${firstRunId}`);

  // The model saw the finished calculator round, not the half-done sleep round.
  const messages = (server.requests[0] as RecordedRequest).body as { messages: OpenAiMessage[] };
  const roles = messages.messages.map((m) => m.role);
  expect(roles).toEqual(["system", "user", "assistant", "tool", "user"]);
  expect(messages.messages[2]?.tool_calls?.map((c) => c.id)).toEqual(["call_calc"]);
  expect(messages.messages[3]?.tool_call_id).toBe("call_calc");
  expect(JSON.stringify(messages)).not.toContain("call_sleep");

  const runs = await runCli(["runs", "--json", "--user", "A", "--session", "s1"], { env });
  const statuses = jsonLines(runs.stdout).map((r) => [r.id, r.status]);
  expect(statuses).toContainEqual([firstRunId, "interrupted"]);
  expect(statuses.filter(([, s]) => s === "done")).toHaveLength(1);
}, 40_000);
