/** A team over a real temp SQLite file, talking to the scripted fake LLM server over HTTP. */

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Database } from "better-sqlite3";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import type { AgentEvent } from "../../src/agent/events.js";
import { loadConfig } from "../../src/config/load-config.js";
import { openDatabase } from "../../src/store/database.js";
import { createTeam, type TeamDeps } from "../../src/team/team.js";
import type { Actor, ChannelInput, ChannelRecord, Team, TeamEvent, TeamRun } from "../../src/team/types.js";
import {
  type FakeLlmServer,
  type FakeTurn,
  type RecordedRequest,
  startFakeLlmServer,
} from "../../src/testing/fake-llm-server.js";

export const owner: Actor = { userId: "olivia", role: "owner" };
export const alice: Actor = { userId: "alice", role: "member" };
export const bob: Actor = { userId: "bob", role: "member" };
export const guest: Actor = { userId: "gus", role: "guest" };

type OpenAiMessage = { role: string; content?: unknown; tool_call_id?: string };

/** The Chat Completions messages of a recorded request. */
export function messagesOf(request: RecordedRequest | undefined): OpenAiMessage[] {
  return (request?.body as { messages?: OpenAiMessage[] } | undefined)?.messages ?? [];
}

/** The system prompt of a request. */
export function systemOf(request: RecordedRequest | undefined): string {
  const first = messagesOf(request)[0];
  return first?.role === "system" && typeof first.content === "string" ? first.content : "";
}

/** The agent a request was made for, from "You are Name (@id)" in its system prompt. */
export function agentOf(request: RecordedRequest | undefined): string {
  return /\(@([a-z0-9_-]+)\)/.exec(systemOf(request))?.[1] ?? "?";
}

/** The last user message's text. */
export function lastUserText(request: RecordedRequest | undefined): string {
  const user = messagesOf(request)
    .filter((m) => m.role === "user")
    .at(-1);
  return typeof user?.content === "string" ? user.content : JSON.stringify(user?.content ?? "");
}

/** The last tool result's text. */
export function lastToolResult(request: RecordedRequest | undefined): string {
  const tool = messagesOf(request)
    .filter((m) => m.role === "tool")
    .at(-1);
  return typeof tool?.content === "string" ? tool.content : "";
}

/**
 * Per-agent scripts for the fake server's default turn: each request is answered by its agent's
 * script (first queued turn for that agent), else with "answer from @id".
 */
export class AgentScripts {
  readonly #queues = new Map<string, FakeTurn[]>();

  /** Queues turns answered only to requests of `agentId`. */
  add(agentId: string, ...turns: FakeTurn[]): void {
    this.#queues.set(agentId, [...(this.#queues.get(agentId) ?? []), ...turns]);
  }

  clear(): void {
    this.#queues.clear();
  }

  /** The fake server's default turn. */
  readonly turn = (request: RecordedRequest): FakeTurn => {
    const agent = agentOf(request);
    return this.#queues.get(agent)?.shift() ?? { text: `answer from @${agent}` };
  };
}

export class TeamHarness {
  team: Team;
  readonly events: TeamEvent[] = [];
  readonly dir: string;
  readonly db: Database;
  readonly #deps: TeamDeps;
  #waiters: Array<{ test: (e: TeamEvent) => boolean; resolve: (e: TeamEvent) => void }> = [];
  #unsubscribe: () => void;

  constructor(
    server: FakeLlmServer,
    overrides: Partial<TeamDeps> = {},
    configure: (config: TeamDeps["config"]) => void = () => undefined,
  ) {
    this.dir = mkdtempSync(join(tmpdir(), "dimsum-team-"));
    this.db = openDatabase(join(this.dir, "dimsum.db"));
    const config = loadConfig({
      cwd: this.dir,
      env: {
        DIMSUM_HOME: this.dir,
        DIMSUM_MODEL: "openai:gpt-test",
        OPENAI_API_KEY: "sk-test-key-1234",
        OPENAI_BASE_URL: `${server.url}/v1`,
      },
    });
    // These suites answer every message with a run of its own; approvals-steering.test.ts sets chats' modes.
    config.queue = { ...config.queue, direct: "followup", group: "followup" };
    configure(config);
    this.#deps = {
      db: this.db,
      home: this.dir,
      config,
      streamOptions: { retry: { maxRetries: 0 } },
      ...overrides,
    };
    this.team = createTeam(this.#deps);
    this.#unsubscribe = this.#listen();
  }

  #listen(): () => void {
    return this.team.subscribe(owner, (event) => {
      this.events.push(event);
      this.#waiters = this.#waiters.filter((w) => {
        if (!w.test(event)) return true;
        w.resolve(event);
        return false;
      });
    });
  }

  /** The first event (already seen or still to come) that passes the test. */
  waitFor(test: (e: TeamEvent) => boolean): Promise<TeamEvent> {
    const seen = this.events.find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.#waiters.push({ test, resolve }));
  }

  /** Waits until the run has ended and returns its final state. */
  async finished(runId: string): Promise<TeamRun> {
    const event = await this.waitFor(
      (e) => e.type === "run" && e.run.id === runId && ["done", "error", "cancelled"].includes(e.run.status),
    );
    if (event.type !== "run") throw new Error("unreachable");
    return event.run;
  }

  /** The agent events forwarded for a run, in order. */
  agentEvents(runId: string): AgentEvent[] {
    return this.events.flatMap((e) => (e.type === "agent" && e.runId === runId ? [e.event] : []));
  }

  /** The text a run streamed (its text deltas joined). */
  streamedText(runId: string): string {
    return this.agentEvents(runId)
      .map((e) => (e.type === "text_delta" ? e.text : ""))
      .join("");
  }

  /** Whether the run forwarded an agent event of this type (and matching `test`). */
  sawAgentEvent(
    runId: string | undefined,
    type: AgentEvent["type"],
    test: (e: AgentEvent) => boolean = () => true,
  ) {
    return this.events.some(
      (e) =>
        e.type === "agent" &&
        (runId === undefined || e.runId === runId) &&
        e.event.type === type &&
        test(e.event),
    );
  }

  /** Run lifecycle statuses of a run, in order. */
  statuses(runId: string): string[] {
    return this.events.flatMap((e) => (e.type === "run" && e.run.id === runId ? [e.run.status] : []));
  }

  /** Closes the team and opens a new one on the same database and home (a server restart). */
  async restart(): Promise<void> {
    this.#unsubscribe();
    await this.team.close();
    this.events.length = 0;
    this.team = createTeam(this.#deps);
    this.#unsubscribe = this.#listen();
  }

  async close(): Promise<void> {
    this.#unsubscribe();
    await this.team.close();
    this.db.close();
  }
}

export interface GroupSuite {
  server: FakeLlmServer;
  h: TeamHarness;
  group: ChannelRecord;
}

/**
 * Registers a test file's hooks: one scripted fake LLM for the file; per test a fresh team and a
 * group channel created by alice. `bind` receives the current objects before each test.
 */
export function groupSuite(
  group: Omit<ChannelInput, "kind">,
  bind: (suite: GroupSuite) => void,
): AgentScripts {
  const scripts = new AgentScripts();
  let server: FakeLlmServer | undefined;
  let h: TeamHarness | undefined;
  beforeAll(async () => {
    server = await startFakeLlmServer({ defaultTurn: scripts.turn });
  });
  afterAll(async () => {
    await server?.close();
  });
  beforeEach(async () => {
    server!.reset();
    scripts.clear();
    h = new TeamHarness(server!);
    bind({ server: server!, h, group: await h.team.createChannel(alice, { kind: "group", ...group }) });
  });
  afterEach(async () => {
    await h?.close();
  });
  return scripts;
}
