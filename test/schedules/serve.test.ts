/** `dimsum serve` runs the scheduler and serves `/api/schedules`, as wired in the real command. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveCommand } from "../../src/cli/commands/serve.js";
import { EXIT_OK } from "../../src/cli/exit-codes.js";
import type { ScheduleRunRecord } from "../../src/schedules/types.js";
import type { ChannelRecord } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { call, login, tempDir } from "../server/helpers.js";
import { expectJson } from "../server/team-helpers.js";

let llm: FakeLlmServer;

beforeAll(async () => {
  llm = await startFakeLlmServer({ defaultTurn: { text: "scheduled hello" } });
});
afterAll(async () => {
  await llm.close();
});

async function until<T>(read: () => Promise<T | undefined> | T | undefined): Promise<T> {
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("dimsum serve with schedules", () => {
  it("serves the schedules API and runs a schedule through the team", async () => {
    const home = tempDir();
    let stdout = "";
    let stderr = "";
    const stop = new AbortController();
    const running = serveCommand(
      { port: 0 },
      {
        stdout: { write: (t: string) => (stdout += t) },
        stderr: { write: (t: string) => (stderr += t) },
        env: {
          DIMSUM_HOME: home,
          DIMSUM_MODEL: "openai:gpt-test",
          OPENAI_API_KEY: "sk-test-key-1234",
          OPENAI_BASE_URL: `${llm.url}/v1`,
        },
        cwd: home,
        signal: stop.signal,
      },
    );
    const url = await until(() => /serving on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)?.[1]);
    const session = await login(url, "owner", /one-time password: (\S+)/.exec(stdout)![1]!);
    const channel = await expectJson<ChannelRecord>(
      await call(url, "/api/channels", {
        session,
        body: { kind: "group", name: "Ops", agentIds: ["assistant"], userIds: [] },
      }),
      201,
    );
    const schedule = await expectJson<{ id: string }>(
      await call(url, "/api/schedules", {
        session,
        body: {
          name: "Hello",
          timing: { kind: "cron", expression: "0 9 * * *", timezone: "Asia/Shanghai" },
          target: { type: "agent", agentId: "assistant", channelId: channel.id, prompt: "Say hello" },
        },
      }),
      201,
    );
    await expectJson(await call(url, `/api/schedules/${schedule.id}/run`, { session, method: "POST" }), 202);
    const run = await until(async () => {
      const runs = await expectJson<ScheduleRunRecord[]>(
        await call(url, `/api/schedules/${schedule.id}/runs`, { session }),
        200,
      );
      return runs[0]?.status === "running" ? undefined : runs[0];
    });
    expect(run).toMatchObject({ status: "done", output: "scheduled hello", trigger: "manual" });

    stop.abort();
    expect(await running).toBe(EXIT_OK);
    expect(stderr).toBe("");
  });
});
