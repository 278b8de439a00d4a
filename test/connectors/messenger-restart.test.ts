/**
 * A bound group's run outlives its process: a real `dimsum serve` (SQLite) polls a fake Telegram, a
 * group chat is bound to a Dimsum group, and the process is killed with SIGKILL while the leader's
 * answer is in a tool call. Started again over the same home, the run resumes from its checkpoint and
 * its answer arrives in the Telegram group once, labelled with the agent, and nothing else is posted
 * for it.
 */
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import type { TeamRun } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { FakeTelegram } from "../../src/testing/fake-telegram.js";
import { call, login, type Session, tempDir, waitFor } from "../server/helpers.js";
import { type ServeProcess, startServe } from "../server/serve-process.js";

const PASSWORD = "messenger-restart-password";
const GROUP_CHAT = -4004;

let llm: FakeLlmServer;
let telegram: FakeTelegram;
let serve: ServeProcess | undefined;

beforeAll(async () => {
  llm = await startFakeLlmServer({ defaultTurn: { text: "default answer" } });
  telegram = await FakeTelegram.start();
});
afterAll(async () => {
  await telegram.close();
  await llm.close();
});
afterEach(async () => kill());

async function start(home: string): Promise<{ url: string; owner: Session }> {
  serve = await startServe(home, {
    DIMSUM_OWNER_PASSWORD: PASSWORD,
    DIMSUM_MODEL: "openai:gpt-test",
    OPENAI_API_KEY: "sk-test-messenger-restart",
    OPENAI_BASE_URL: `${llm.url}/v1`,
  });
  return { url: serve.url, owner: await login(serve.url, "owner", PASSWORD) };
}

/** A crash: SIGKILL, no shutdown work. */
async function kill(): Promise<void> {
  const child = serve;
  serve = undefined;
  await child?.stop("SIGKILL");
}

async function json<T>(res: Response): Promise<T> {
  expect(res.status, await res.clone().text()).toBeLessThan(300);
  return (await res.json()) as T;
}

function say(text: string): void {
  telegram.userMessage({ chatId: GROUP_CHAT, userId: 61, text, username: "ana", chatTitle: "Night shift" });
}

/** Polls an async read until it gives a value. */
async function until<T>(read: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const inGroup = () => telegram.sent.filter((m) => m.chatId === String(GROUP_CHAT));

it("delivers a bound group's answer once after a SIGKILL in the middle of its run", async () => {
  const home = tempDir("dimsum-messenger-restart-");
  let { url, owner } = await start(home);
  const connector = await json<{ id: string }>(
    await call(url, "/api/connectors", {
      session: owner,
      body: {
        type: "telegram",
        name: "Tg bot",
        agentId: "assistant",
        settings: { mode: "polling", baseUrl: telegram.url, pollTimeoutSec: 1, streaming: false },
        secrets: { botToken: telegram.token },
      },
    }),
  );
  await json(await call(url, `/api/connectors/${connector.id}/start`, { session: owner, method: "POST" }));
  const group = await json<{ id: string }>(
    await call(url, "/api/channels", {
      session: owner,
      body: {
        kind: "group",
        name: "Night shift",
        leaderAgentId: "assistant",
        agentIds: ["assistant", "coder"],
        userIds: [],
      },
    }),
  );
  await json(
    await call(url, `/api/channels/${group.id}`, {
      session: owner,
      method: "PATCH",
      body: { queueMode: "followup" },
    }),
  );

  // The chat is seen (answered as a direct chat), then bound to the group.
  say("hello bot");
  await waitFor(() => (inGroup().length >= 1 ? true : undefined));
  await json(
    await call(url, `/api/connectors/${connector.id}/chats/${GROUP_CHAT}`, {
      session: owner,
      method: "PATCH",
      body: { mode: "group", channelId: group.id },
    }),
  );

  llm.reset();
  llm.enqueue({ toolCalls: [{ id: "call_sleep", name: "execute_command", args: { command: "sleep 20" } }] });
  llm.enqueue({ text: "The nightly job finished after the restart." });
  const before = inGroup().length;
  say("run the nightly job");
  await waitFor(() => (llm.requests.length >= 1 ? true : undefined));
  // The tool call is running (the checkpoint of the model's turn is written).
  await new Promise((r) => setTimeout(r, 1500));
  await kill();
  expect(inGroup().length).toBe(before);

  ({ url, owner } = await start(home));
  const runs = async () =>
    json<TeamRun[]>(await call(url, `/api/channels/${group.id}/runs`, { session: owner }));
  const run = await until(async () => {
    const found = (await runs()).find((r) => r.depth === 0);
    return found && ["done", "error", "cancelled"].includes(found.status) ? found : undefined;
  });
  expect(run.status).toBe("done");
  await waitFor(() =>
    inGroup().some((m) => m.text.includes("The nightly job finished after the restart.")) ? true : undefined,
  );
  // Whatever else was due went out meanwhile: the outbox drains the chat in order, and one more
  // message from the same chat is answered after everything queued before it.
  llm.enqueue({ text: "Second answer." });
  say("and now?");
  await waitFor(() => (inGroup().some((m) => m.text.includes("Second answer.")) ? true : undefined));

  const posted = inGroup().slice(before);
  const answers = posted.filter((m) => m.text.includes("The nightly job finished after the restart."));
  expect(answers).toHaveLength(1);
  expect(answers[0]?.bold?.[0]).toMatch(/Assistant/);
  // Nothing about the interrupted run besides its one answer.
  expect(posted.map((m) => m.text).filter((t) => !t.includes("Second answer."))).toHaveLength(1);
  expect(posted.some((m) => m.text.includes("could not answer"))).toBe(false);
  expect(llm.requests).toHaveLength(3);
}, 90_000);
