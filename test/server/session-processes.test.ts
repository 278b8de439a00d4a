/**
 * Session processes through a real `dimsum serve` with a scripted model and the real sandbox: the
 * agent starts a ticker, reads it twice (only new lines the second time), waits for a pattern; the
 * process outlives the run, is listed to the chat's readers (404 for another member), and is gone
 * when the chat is archived. A second one is gone after a SIGKILL of the server and its restart:
 * no orphan remains on the machine. A preview opens for a reader and is 404 for anyone else.
 */
import { readdirSync, readFileSync } from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { TeamRun } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { detectSandbox } from "../../src/tools/builtin/sandbox/detect.js";
import { call, login, type Session, tempDir } from "./helpers.js";
import { type ServeProcess, startServe } from "./serve-process.js";

const PASSWORD = "processes-password";
const sandboxed = (await detectSandbox("/usr/bin/bwrap")).available;

let fake: FakeLlmServer;
let serve: ServeProcess | undefined;

beforeAll(async () => {
  fake = await startFakeLlmServer({ defaultTurn: { text: "done" } });
});
afterAll(async () => fake.close());
afterEach(async () => {
  await serve?.stop("SIGTERM");
  serve = undefined;
});

async function start(home: string): Promise<{ url: string; owner: Session }> {
  serve = await startServe(home, {
    DIMSUM_OWNER_PASSWORD: PASSWORD,
    DIMSUM_MODEL: "openai:gpt-test",
    OPENAI_API_KEY: "sk-test-processes",
    OPENAI_BASE_URL: `${fake.url}/v1`,
  });
  return { url: serve.url, owner: await login(serve.url, "owner", PASSWORD) };
}

async function json<T>(res: Response): Promise<T> {
  expect(res.status, await res.clone().text()).toBeLessThan(300);
  return (await res.json()) as T;
}

/** Host pids whose command line contains `token`. */
function running(token: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(token)) found.push(Number(entry));
    } catch {
      // Exited meanwhile.
    }
  }
  return found;
}

async function until<T>(read: () => T | undefined | Promise<T | undefined>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 100));
  }
}

const TICKER = (token: string) =>
  `for i in ${Array.from({ length: 120 }, (_, i) => i).join(" ")}; do echo "${token} $i"; sleep 1; done`;

async function chat(
  url: string,
  owner: Session,
  text: string,
): Promise<{ channelId: string; runId: string }> {
  const channel = await json<{ id: string }>(
    await call(url, "/api/channels", {
      session: owner,
      body: {
        kind: "direct",
        name: "Processes",
        leaderAgentId: "assistant",
        agentIds: ["assistant"],
        userIds: [],
      },
    }),
  );
  const posted = await json<{ runs: TeamRun[] }>(
    await call(url, `/api/channels/${channel.id}/messages`, { session: owner, body: { text } }),
  );
  return { channelId: channel.id, runId: posted.runs[0]?.id as string };
}

async function finished(url: string, owner: Session, runId: string): Promise<TeamRun> {
  return until(async () => {
    const run = await json<TeamRun>(await call(url, `/api/runs/${runId}`, { session: owner }));
    return ["done", "error", "cancelled"].includes(run.status) ? run : undefined;
  }, 60_000);
}

/** The tool results the model was sent, in order. */
function toolResults(): string[] {
  const last = fake.requests.at(-1)?.body as { messages: Array<{ role: string; content: string }> };
  return last.messages.filter((m) => m.role === "tool").map((m) => m.content);
}

describe.skipIf(!sandboxed)("session processes in dimsum serve", () => {
  it("outlive the run, are read twice, listed to readers, and end when the chat is archived", async () => {
    const home = tempDir("dimsum-proc-serve-");
    const { url, owner } = await start(home);
    const token = `tick${process.pid}serveA`;
    fake.reset();
    fake.enqueue(
      { toolCalls: [{ name: "process_start", args: { name: "ticker", command: TICKER(token) } }] },
      { toolCalls: [{ name: "process_read", args: { name: "ticker", waitForPattern: `${token} 1$` } }] },
      { toolCalls: [{ name: "process_read", args: { name: "ticker", waitForPattern: `${token} 3$` } }] },
      { text: "The ticker runs." },
    );
    const { channelId, runId } = await chat(url, owner, "start a ticker");
    expect((await finished(url, owner, runId)).status).toBe("done");
    const [startedResult, first, second] = toolResults();
    expect(startedResult).toContain("Started ticker.");
    expect(first).toContain(`${token} 0`);
    expect(first).toContain(`${token} 1`);
    expect(second).not.toContain(`${token} 0`);
    expect(second).toContain(`${token} 2`);
    expect(second).toContain(`${token} 3`);
    // The run is over; the process is not.
    expect(running(token).length).toBeGreaterThan(0);
    const listed = await json<Array<{ name: string; state: string; output: Array<{ text: string }> }>>(
      await call(url, `/api/channels/${channelId}/processes`, { session: owner }),
    );
    expect(listed.map((p) => [p.name, p.state])).toEqual([["ticker", "running"]]);
    expect(listed[0]?.output.some((l) => l.text === `${token} 0`)).toBe(true);
    // Archiving the chat ends it.
    await json(
      await call(url, `/api/channels/${channelId}/prefs`, {
        session: owner,
        method: "PUT",
        body: { archived: true },
      }),
    );
    await until(() => (running(token).length === 0 ? true : undefined));
  }, 120_000);

  it("leaves no orphan after a SIGKILL of the server and its restart", async () => {
    const home = tempDir("dimsum-proc-kill-");
    const { url, owner } = await start(home);
    const token = `tick${process.pid}serveB`;
    fake.reset();
    fake.enqueue(
      { toolCalls: [{ name: "process_start", args: { name: "ticker", command: TICKER(token) } }] },
      { toolCalls: [{ name: "process_read", args: { name: "ticker", waitForPattern: `${token} 0$` } }] },
      { text: "Started." },
    );
    const { runId } = await chat(url, owner, "start a ticker");
    expect((await finished(url, owner, runId)).status).toBe("done");
    expect(running(token).length).toBeGreaterThan(0);
    await serve?.stop("SIGKILL");
    serve = undefined;
    await start(home);
    await until(() => (running(token).length === 0 ? true : undefined));
    expect(readdirSync(`${home}/run/processes`)).toEqual([]);
  }, 120_000);

  it("opens a preview for a reader of the chat, 404 for another member and for anyone signed out", async () => {
    const home = tempDir("dimsum-proc-preview-");
    const { url, owner } = await start(home);
    const other = await json<{ id: string }>(
      await call(url, "/api/users", {
        session: owner,
        body: { username: "bob", password: "bob-password-1", role: "member" },
      }),
    );
    expect(other.id).toBeDefined();
    const bob = await login(url, "bob", "bob-password-1");
    fake.reset();
    const server = `node -e "require('http').createServer((q,s)=>{s.setHeader('content-type','text/html');s.end('<p>preview '+q.url+'</p>')}).listen(5173,'127.0.0.1')"`;
    fake.enqueue(
      { toolCalls: [{ name: "process_start", args: { name: "web", command: server } }] },
      { toolCalls: [{ name: "process_read", args: { name: "web", waitForPort: 5173 } }] },
      { text: "It serves." },
    );
    const { channelId, runId } = await chat(url, owner, "serve a page");
    expect((await finished(url, owner, runId)).status).toBe("done");
    const listed = await json<Array<{ previews: Array<{ port: number; path: string }> }>>(
      await call(url, `/api/channels/${channelId}/processes`, { session: owner }),
    );
    const path = listed[0]?.previews[0]?.path as string;
    expect(listed[0]?.previews[0]?.port).toBe(5173);
    const asOwner = await call(url, `${path}page?x=1`, { session: owner });
    expect(asOwner.status).toBe(200);
    expect(await asOwner.text()).toBe("<p>preview /page?x=1</p>");
    expect(asOwner.headers.get("content-security-policy")).toContain("sandbox");
    expect((await call(url, `${path}page`, { session: bob })).status).toBe(404);
    expect((await fetch(`${url}${path}page`)).status).toBe(404);
    expect((await call(url, `/api/channels/${channelId}/processes`, { session: bob })).status).toBe(404);
    // A made-up key, or another port, is 404 too.
    expect((await call(url, path.replace(/\/[^/]+\/$/, "/wrongkey/"), { session: owner })).status).toBe(404);
    expect((await call(url, path.replace("/5173/", "/22/"), { session: owner })).status).toBe(404);
  }, 120_000);
});
