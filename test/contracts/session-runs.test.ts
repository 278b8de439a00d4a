import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/agent/events.js";
import { DimsumError } from "../../src/errors.js";
import type { Message, Usage } from "../../src/llm/types.js";
import { INTERRUPTED_TOOL_RESULT } from "../../src/store/session-records.js";
import { findToolPairIssues } from "../../src/store/tool-pairs.js";
import type { SessionRef } from "../../src/store/types.js";
import { toolTurn } from "../store/helpers.js";
import { type Backend, describeBackends, rawSql } from "./backends.js";
import { newStore } from "./session-store.js";

const a1: SessionRef = { userId: "A", sessionId: "window1" };
const a2: SessionRef = { userId: "A", sessionId: "window2" };
const b1: SessionRef = { userId: "B", sessionId: "window1" };
const usage: Usage = { inputTokens: 120, outputTokens: 30, totalTokens: 150, cachedInputTokens: 100 };

async function rejection(promise: Promise<unknown>): Promise<DimsumError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DimsumError);
  return err as DimsumError;
}

/** Writes rows directly, bypassing the store's checks, the way an older Dimsum might have left them. */
async function insertRaw(
  backend: Backend,
  ref: SessionRef,
  runId: string,
  messages: Message[],
): Promise<void> {
  const [session] = await rawSql<{ id: number }>(
    backend,
    "SELECT id FROM sessions WHERE user_id = ? AND session_key = ?",
    [ref.userId, ref.sessionId],
  );
  for (const m of messages) {
    const tool = m.role === "tool" ? [m.toolCallId, m.toolName] : [null, null];
    const [next] = await rawSql<{ seq: number }>(
      backend,
      "SELECT coalesce(max(seq), 0) + 1 AS seq FROM messages WHERE session_id = ?",
      [session?.id],
    );
    await rawSql(
      backend,
      `INSERT INTO messages (session_id, run_id, seq, role, content_json, tool_call_id, tool_name, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, 0)`,
      [session?.id, runId, next?.seq, m.role, JSON.stringify(m.content), ...tool],
    );
  }
}

describeBackends("session runs", (open) => {
  describe("runs", () => {
    it("start, finish and list newest first per session", async () => {
      let clock = 1;
      const { store } = await newStore(open, { now: () => clock });
      await store.openSession(a1);
      await store.openSession(a2);
      clock = 100;
      const started = await store.startRun(a1, { runId: "r1", model: "openai:gpt-x", prompt: "hello" });
      expect(started).toEqual({
        id: "r1",
        userId: "A",
        sessionId: "window1",
        status: "running",
        model: "openai:gpt-x",
        prompt: "hello",
        startedAt: 100,
        iterations: 0,
      });
      clock = 101;
      const done = await store.finishRun(a1, "r1", { status: "done", iterations: 3, usage });
      expect(done).toMatchObject({ status: "done", iterations: 3, usage, endedAt: 101 });
      clock = 102;
      await store.startRun(a1, { runId: "r2", model: "m" });
      const failed = await store.finishRun(a1, "r2", {
        status: "error",
        iterations: 1,
        error: "provider down",
      });
      expect(failed).toMatchObject({ status: "error", error: "provider down" });
      expect(failed).not.toHaveProperty("usage");
      await store.startRun(a2, { runId: "r3", model: "m" });

      expect((await store.listRuns(a1)).map((r) => r.id)).toEqual(["r2", "r1"]);
      expect((await store.listRuns(a1, { limit: 1 })).map((r) => r.id)).toEqual(["r2"]);
      expect((await store.listRuns(a2)).map((r) => r.id)).toEqual(["r3"]);
      expect(await store.listRuns(b1)).toEqual([]);
      expect((await rejection(store.startRun(a2, { runId: "r1", model: "m" }))).message).toContain(
        "already exists",
      );
    });

    it("record events in order across batches", async () => {
      let clock = 0;
      const { store } = await newStore(open, { now: () => (clock += 10) });
      await store.openSession(a1);
      await store.startRun(a1, { runId: "r1", model: "m" });
      const first: AgentEvent[] = [
        { type: "run_start", runId: "r1", model: "m", tools: ["shell"] },
        { type: "tool_call", runId: "r1", id: "c1", name: "shell", args: { command: "ls" } },
      ];
      const last: AgentEvent[] = [{ type: "text_delta", runId: "r1", text: "ok" }];
      await store.appendRunEvents(a1, "r1", first);
      await store.appendRunEvents(a1, "r1", []);
      await store.appendRunEvents(a1, "r1", last);
      const events = await store.getRunEvents(a1, "r1");
      expect(events.map((e) => [e.seq, e.type])).toEqual([
        [1, "run_start"],
        [2, "tool_call"],
        [3, "text_delta"],
      ]);
      expect(events[1]?.payload).toEqual({
        type: "tool_call",
        runId: "r1",
        id: "c1",
        name: "shell",
        args: { command: "ls" },
      });
      expect(events[2]!.at).toBeGreaterThan(events[0]!.at);
    });

    it("belong to their session: another user's ref cannot read or change them", async () => {
      const { store } = await newStore(open);
      for (const ref of [a1, a2, b1]) await store.openSession(ref);
      await store.startRun(a1, { runId: "secret", model: "m", prompt: "A's prompt" });
      await store.appendRunEvents(a1, "secret", [{ type: "text_delta" }]);

      for (const other of [a2, b1]) {
        expect(await store.getRun(other, "secret")).toBeUndefined();
        expect(await store.getRunEvents(other, "secret")).toEqual([]);
        const finish = await rejection(
          store.finishRun(other, "secret", { status: "cancelled", iterations: 0 }),
        );
        expect(finish.message).toContain(`does not exist in session ${other.userId}:${other.sessionId}`);
        await rejection(store.appendRunEvents(other, "secret", [{ type: "forged" }]));
        expect((await store.recoverInterruptedRuns(other)).runs).toEqual([]);
      }
      expect(await store.findRun("B", "secret")).toBeUndefined();
      expect(await store.findRun("A", "secret")).toMatchObject({ sessionId: "window1", status: "running" });
      expect((await store.getRunEvents(a1, "secret")).map((e) => e.type)).toEqual(["text_delta"]);
    });

    it("skip an event whose payload is unreadable", async () => {
      const { store, backend, warnings } = await newStore(open);
      await store.openSession(a1);
      await store.startRun(a1, { runId: "r1", model: "m" });
      await store.appendRunEvents(a1, "r1", [{ type: "a" }, { type: "b" }]);
      await rawSql(backend, "UPDATE run_events SET payload_json = '{' WHERE seq = 1");
      expect((await store.getRunEvents(a1, "r1")).map((e) => e.type)).toEqual(["b"]);
      expect(warnings[0]).toContain("event 1 of run r1");
    });
  });

  describe("checkpoints", () => {
    const checkpoint = { iteration: 2, messages: [{ role: "user", content: "go" }], counts: [["k", 1]] };

    it("round trip, replace and clear; the run record is unchanged", async () => {
      let clock = 100;
      const { store } = await newStore(open, { now: () => clock });
      await store.openSession(a1);
      await store.startRun(a1, { runId: "r1", model: "m" });
      await store.startRun(a1, { runId: "r2", model: "m" });
      expect(await store.loadCheckpoint(a1, "r1")).toBeUndefined();
      const before = await store.getRun(a1, "r1");

      await store.saveCheckpoint(a1, "r1", checkpoint);
      expect(await store.loadCheckpoint(a1, "r1")).toEqual({ checkpoint });
      expect(await store.loadCheckpoint(a1, "r2")).toBeUndefined();
      expect(await store.getRun(a1, "r1")).toEqual(before);

      clock = 200;
      await store.saveCheckpoint(a1, "r1", { iteration: 3 });
      expect(await store.loadCheckpoint(a1, "r1")).toEqual({ checkpoint: { iteration: 3 } });
      await store.saveCheckpoint(a1, "r1", "plain text");
      expect(await store.loadCheckpoint(a1, "r1")).toEqual({ checkpoint: "plain text" });
      await store.saveCheckpoint(a1, "r1", undefined);
      expect(await store.loadCheckpoint(a1, "r1")).toBeUndefined();
      expect(await store.loadCheckpoint(a1, "missing")).toBeUndefined();
    });

    it("mark a waiting run with the time it started waiting, kept while it goes on waiting", async () => {
      let clock = 100;
      const { store, backend } = await newStore(open, { now: () => clock });
      await store.openSession(a1);
      await store.startRun(a1, { runId: "r1", model: "m" });
      await store.saveCheckpoint(a1, "r1", checkpoint, { waiting: true });
      expect(await store.loadCheckpoint(a1, "r1")).toEqual({ checkpoint, waitingSince: 100 });
      clock = 200;
      await store.saveCheckpoint(a1, "r1", { iteration: 3 }, { waiting: true });
      expect(await store.loadCheckpoint(a1, "r1")).toEqual({
        checkpoint: { iteration: 3 },
        waitingSince: 100,
      });
      // Resumed: running again, no longer waiting.
      await store.saveCheckpoint(a1, "r1", { iteration: 4 }, { waiting: false });
      expect(await store.loadCheckpoint(a1, "r1")).toEqual({ checkpoint: { iteration: 4 } });
      clock = 300;
      await store.saveCheckpoint(a1, "r1", { iteration: 5 }, { waiting: true });
      expect(await store.loadCheckpoint(a1, "r1")).toEqual({
        checkpoint: { iteration: 5 },
        waitingSince: 300,
      });
      // Clearing the checkpoint ends the wait too.
      await store.saveCheckpoint(a1, "r1", undefined, { waiting: true });
      expect(await store.loadCheckpoint(a1, "r1")).toBeUndefined();
      expect(
        await rawSql(backend, "SELECT checkpoint_json, waiting_since FROM runs WHERE id = 'r1'"),
      ).toEqual([{ checkpoint_json: null, waiting_since: null }]);
    });

    it("belong to their session: another ref can neither read nor write them", async () => {
      const { store } = await newStore(open);
      for (const ref of [a1, a2, b1]) await store.openSession(ref);
      await store.startRun(a1, { runId: "r1", model: "m" });
      await store.saveCheckpoint(a1, "r1", checkpoint, { waiting: true });
      for (const other of [a2, b1]) {
        expect(await store.loadCheckpoint(other, "r1")).toBeUndefined();
        const err = await rejection(store.saveCheckpoint(other, "r1", { forged: true }));
        expect(err.message).toContain(`Run r1 does not exist in session ${other.userId}:${other.sessionId}`);
      }
      expect((await rejection(store.saveCheckpoint(a1, "missing", checkpoint))).message).toContain(
        "Run missing does not exist",
      );
      const noSession = { userId: "C", sessionId: "none" };
      expect((await rejection(store.saveCheckpoint(noSession, "r1", checkpoint))).message).toContain(
        "does not exist",
      );
      expect(await store.loadCheckpoint(noSession, "r1")).toBeUndefined();
      expect((await store.loadCheckpoint(a1, "r1"))?.checkpoint).toEqual(checkpoint);
    });

    it("are cleared when the run finishes", async () => {
      const { store } = await newStore(open, { now: () => 50 });
      await store.openSession(a1);
      await store.startRun(a1, { runId: "r1", model: "m" });
      await store.startRun(a1, { runId: "r2", model: "m" });
      await store.saveCheckpoint(a1, "r1", checkpoint);
      await store.saveCheckpoint(a1, "r2", checkpoint, { waiting: true });
      await store.finishRun(a1, "r1", { status: "done", iterations: 2 });
      await store.finishRun(a1, "r2", { status: "cancelled", iterations: 2 });
      expect(await store.loadCheckpoint(a1, "r1")).toBeUndefined();
      expect(await store.loadCheckpoint(a1, "r2")).toBeUndefined();
    });

    it("skip an unreadable checkpoint, and say so", async () => {
      const { store, backend, warnings } = await newStore(open);
      await store.openSession(a1);
      await store.startRun(a1, { runId: "r1", model: "m" });
      await store.saveCheckpoint(a1, "r1", checkpoint);
      await rawSql(backend, "UPDATE runs SET checkpoint_json = '{' WHERE id = 'r1'");
      expect(await store.loadCheckpoint(a1, "r1")).toBeUndefined();
      expect(warnings[0]).toContain("the checkpoint of run r1");
    });
  });

  describe("recoverInterruptedRuns", () => {
    it("leaves runs waiting for a person alone and interrupts the others", async () => {
      const { store } = await newStore(open, { now: () => 7000 });
      await store.openSession(a1);
      await store.startRun(a1, { runId: "waiting", model: "m" });
      await store.startRun(a1, { runId: "checkpointed", model: "m" });
      await store.startRun(a1, { runId: "plain", model: "m" });
      await store.saveCheckpoint(a1, "waiting", { iteration: 1 }, { waiting: true });
      await store.saveCheckpoint(a1, "checkpointed", { iteration: 2 });

      const result = await store.recoverInterruptedRuns(a1);
      expect(result.runs.map((r) => r.id).sort()).toEqual(["checkpointed", "plain"]);
      expect(result.runs.every((r) => r.status === "interrupted" && r.endedAt === 7000)).toBe(true);
      expect((await store.getRun(a1, "waiting"))?.status).toBe("running");
      expect(await store.loadCheckpoint(a1, "waiting")).toEqual({
        checkpoint: { iteration: 1 },
        waitingSince: 7000,
      });
      // An interrupted run keeps its checkpoint: a restart may resume from it.
      expect(await store.loadCheckpoint(a1, "checkpointed")).toEqual({ checkpoint: { iteration: 2 } });
      expect(await store.recoverInterruptedRuns(a1)).toEqual({ runs: [], syntheticResults: [] });

      // Resumed and running again, it is interrupted like any other when its process dies.
      await store.saveCheckpoint(a1, "waiting", { iteration: 2 });
      expect((await store.recoverInterruptedRuns(a1)).runs.map((r) => r.id)).toEqual(["waiting"]);
    });

    it("closes runs left running with a note and leaves finished ones alone", async () => {
      const { store } = await newStore(open, { now: () => 5000 });
      await store.openSession(a1);
      await store.openSession(a2);
      await store.startRun(a1, { runId: "finished", model: "m" });
      await store.finishRun(a1, "finished", { status: "done", iterations: 1 });
      await store.startRun(a1, { runId: "dead", model: "m" });
      await store.startRun(a2, { runId: "other-window", model: "m" });

      const result = await store.recoverInterruptedRuns(a1);
      expect(result.syntheticResults).toEqual([]);
      expect(result.runs).toHaveLength(1);
      expect(result.runs[0]).toMatchObject({ id: "dead", status: "interrupted", endedAt: 5000 });
      expect(result.runs[0]?.note).toContain("interrupted");
      expect((await store.getRun(a1, "finished"))?.status).toBe("done");
      expect((await store.getRun(a2, "other-window"))?.status).toBe("running");
      expect(await store.recoverInterruptedRuns(a1)).toEqual({ runs: [], syntheticResults: [] });
    });

    it("answers tool calls an older database left without results, in one step", async () => {
      const { store, backend } = await newStore(open);
      await store.openSession(a1);
      await store.appendMessages(a1, "old", [{ role: "user", content: "go" }]);
      const [assistant, firstResult] = toolTurn("old", 3);
      await insertRaw(backend, a1, "old", [assistant!, firstResult!]);

      const { syntheticResults } = await store.recoverInterruptedRuns(a1);
      expect(syntheticResults.map((s) => s.message)).toEqual([
        {
          role: "tool",
          toolCallId: "old-call-1",
          toolName: "read_file",
          content: INTERRUPTED_TOOL_RESULT,
          isError: true,
        },
        {
          role: "tool",
          toolCallId: "old-call-2",
          toolName: "read_file",
          content: INTERRUPTED_TOOL_RESULT,
          isError: true,
        },
      ]);
      expect(syntheticResults.every((s) => s.runId === "old")).toBe(true);
      const history = (await store.loadMessages(a1)).map((s) => s.message);
      expect(findToolPairIssues(history)).toEqual({ unanswered: [], orphans: [] });
      expect((await store.recoverInterruptedRuns(a1)).syntheticResults).toEqual([]);
      await expect(
        store.appendMessages(a1, "next", [{ role: "user", content: "again" }]),
      ).resolves.toHaveLength(1);
    });

    it("leaves an unanswered call alone when later messages follow it, and says so", async () => {
      const { store, backend, warnings } = await newStore(open);
      await store.openSession(a1);
      const [assistant] = toolTurn("old", 1);
      await insertRaw(backend, a1, "old", [assistant!, { role: "user", content: "later" }]);
      expect(await store.recoverInterruptedRuns(a1)).toEqual({ runs: [], syntheticResults: [] });
      expect(warnings[0]).toContain("tool calls without results followed by later messages");
    });
  });
});
