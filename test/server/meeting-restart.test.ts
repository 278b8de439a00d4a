/**
 * A meeting outlives its process: `dimsum serve` (SQLite) is killed with SIGKILL while the second
 * round's second speaker is talking, and started again over the same home. The meeting resumes at
 * that same speaker; nothing said before is said again, and the cut-off statement appears once.
 */
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import type { MeetingRecord } from "../../src/team/meeting-types.js";
import type { ChannelMessage } from "../../src/team/types.js";
import {
  type FakeLlmServer,
  type RecordedRequest,
  startFakeLlmServer,
} from "../../src/testing/fake-llm-server.js";
import { call, login, type Session, tempDir, waitFor } from "./helpers.js";
import { type ServeProcess, startServe } from "./serve-process.js";

const PASSWORD = "meeting-restart-password";
const MINUTES = {
  decision: "CSV first",
  reason: "Everyone agreed in round 2.",
  options: [{ option: "CSV", for: ["asked for"], against: [] }],
  dissent: [],
  actionItems: [{ task: "parser", owner: "@coder", due: "2026-12-14" }],
  openQuestions: [],
};

let fake: FakeLlmServer;
let serve: ServeProcess | undefined;

beforeAll(async () => {
  fake = await startFakeLlmServer({ defaultTurn: { text: "unexpected extra turn" } });
});
afterAll(async () => fake.close());
afterEach(async () => {
  const child = serve;
  serve = undefined;
  await child?.stop("SIGKILL");
});

async function start(home: string): Promise<{ url: string; owner: Session }> {
  serve = await startServe(home, {
    DIMSUM_OWNER_PASSWORD: PASSWORD,
    DIMSUM_MODEL: "openai:gpt-test",
    OPENAI_API_KEY: "sk-test-meeting",
    OPENAI_BASE_URL: `${fake.url}/v1`,
  });
  return { url: serve.url, owner: await login(serve.url, "owner", PASSWORD) };
}

async function json<T>(res: Response): Promise<T> {
  expect(res.status, await res.clone().text()).toBeLessThan(300);
  return (await res.json()) as T;
}

const agentOf = (r: RecordedRequest | undefined) => {
  const messages =
    (r?.body as { messages?: Array<{ role: string; content?: unknown }> } | undefined)?.messages ?? [];
  return /\(@([a-z0-9_-]+)\)/.exec(String(messages[0]?.content ?? ""))?.[1];
};
const inputOf = (r: RecordedRequest | undefined) => {
  const messages =
    (r?.body as { messages?: Array<{ role: string; content?: unknown }> } | undefined)?.messages ?? [];
  return String(messages.filter((m) => m.role === "user").at(-1)?.content ?? "");
};

it("a SIGKILL in round 2 resumes at the same speaker, with nothing said twice", async () => {
  const home = tempDir("dimsum-meeting-restart-");
  for (const text of ["A1: CSV first.", "C1: easy parser.", "W1: docs too.", "A2: agreed."])
    fake.enqueue({ text });
  fake.enqueue({ text: "C2: half a sentence that never", stall: { afterChunks: 2, mode: "silent" } });
  let { url, owner } = await start(home);
  const group = await json<{ id: string }>(
    await call(url, "/api/channels", {
      session: owner,
      body: {
        kind: "group",
        name: "Council",
        leaderAgentId: "assistant",
        agentIds: ["assistant", "coder", "writer"],
        userIds: [],
      },
    }),
  );
  const meeting = await json<MeetingRecord>(
    await call(url, `/api/channels/${group.id}/meetings`, {
      session: owner,
      body: { topic: "What next?", rounds: 2 },
    }),
  );
  expect(meeting).toMatchObject({ participants: ["assistant", "coder", "writer"], moderatorId: "assistant" });
  // The fifth turn (round 2, @coder) is streaming when the server dies.
  await waitFor(() => (fake.requests.length >= 5 ? true : undefined));
  await new Promise((r) => setTimeout(r, 500));
  await serve?.stop("SIGKILL");
  serve = undefined;
  expect(fake.requests.map(agentOf)).toEqual(["assistant", "coder", "writer", "assistant", "coder"]);

  for (const text of ["C2: CSV, after the restart.", "W2: fine."]) fake.enqueue({ text });
  fake.enqueue({ text: JSON.stringify(MINUTES) });
  ({ url, owner } = await start(home));
  let done: MeetingRecord;
  for (;;) {
    done = await json<MeetingRecord>(await call(url, `/api/meetings/${meeting.id}`, { session: owner }));
    if (done.status !== "running" && done.status !== "closing") break;
    await new Promise((r) => setTimeout(r, 100));
  }

  expect(done.status).toBe("done");
  // Resumed at the same speaker: @coder again, then @writer, then the minutes.
  expect(fake.requests.map(agentOf)).toEqual([
    "assistant",
    "coder",
    "writer",
    "assistant",
    "coder",
    "coder",
    "writer",
    "assistant",
  ]);
  const resumed = inputOf(fake.requests[5]);
  for (const said of ["A1: CSV first.", "C1: easy parser.", "W1: docs too.", "A2: agreed."]) {
    expect(resumed.split(said)).toHaveLength(2);
  }
  expect(resumed).not.toContain("half a sentence");
  expect(done.statements.map((s) => `${s.round}:${s.agentId}`)).toEqual([
    "1:assistant",
    "1:coder",
    "1:writer",
    "2:assistant",
    "2:coder",
    "2:writer",
  ]);
  expect(done.minutes).toEqual(MINUTES);
  const messages = await json<ChannelMessage[]>(
    await call(url, `/api/channels/${group.id}/messages`, { session: owner }),
  );
  const agentTexts = messages.filter((m) => m.author.type === "agent").map((m) => m.text);
  expect(agentTexts.slice(0, 6)).toEqual([
    "A1: CSV first.",
    "C1: easy parser.",
    "W1: docs too.",
    "A2: agreed.",
    "C2: CSV, after the restart.",
    "W2: fine.",
  ]);
  expect(agentTexts).toHaveLength(7);
  expect(agentTexts.some((t) => t.includes("half a sentence"))).toBe(false);
  // The minutes are the card, and export as Markdown.
  expect(messages.at(-1)?.parts[0]).toMatchObject({ type: "minutes", meetingId: meeting.id });
  const md = await call(url, `/api/meetings/${meeting.id}/minutes.md`, { session: owner });
  expect(md.headers.get("content-type")).toContain("text/markdown");
  expect(await md.text()).toContain("# Minutes: What next?");
}, 90_000);
