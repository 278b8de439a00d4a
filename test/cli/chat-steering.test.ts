/**
 * `dimsum chat` at a terminal: a line typed while an answer streams reaches that answer before its
 * next model call (steering), instead of waiting for a turn of its own.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, expect, it } from "vitest";
import { chatCommand } from "../../src/cli/commands/chat.js";
import type { CliIo } from "../../src/cli/session-setup.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";

let llm: FakeLlmServer;
beforeAll(async () => {
  llm = await startFakeLlmServer({ strict: true });
});
afterAll(async () => llm.close());

/** A stream that says it is a terminal, as process.stdin does at a keyboard. */
function terminal(): PassThrough & { isTTY: boolean } {
  return Object.assign(new PassThrough(), { isTTY: true });
}

it("sends a line typed during a tool call to the running answer", async () => {
  const home = mkdtempSync(join(tmpdir(), "dimsum-chat-steer-"));
  const stdin = terminal();
  const stderr = new PassThrough();
  let said = "";
  stderr.on("data", (d: Buffer) => (said += d.toString()));
  llm.enqueue(
    { toolCalls: [{ name: "execute_command", args: { command: "sleep 2" } }] },
    { text: "switched" },
  );
  const io = {
    stdin,
    stdout: new PassThrough(),
    stderr,
    cwd: home,
    env: {
      DIMSUM_HOME: home,
      DIMSUM_MODEL: "openai:gpt-test",
      OPENAI_API_KEY: "sk-chat-steer",
      OPENAI_BASE_URL: `${llm.url}/v1`,
      NO_COLOR: "1",
    },
  } as unknown as CliIo;
  const done = chatCommand({ user: "ada", session: "steer" }, io);
  stdin.write("count the files in bash\n");
  for (let i = 0; i < 400 && llm.requests.length < 1; i++) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 300));
  stdin.write("stop, use Python instead\n");
  for (let i = 0; i < 600 && llm.requests.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
  stdin.end();
  expect(await done).toBe(0);
  expect(said).toContain("sent to the running answer");
  expect(llm.requests).toHaveLength(2);
  expect(JSON.stringify(llm.requests[1]?.body)).toContain("stop, use Python instead");
}, 20_000);
