/**
 * `beginTurn` and `saveRunStep`: a turn's start and each step of a run written as one unit, with the
 * same results as the calls they stand for (`openSession` + `loadMessages` + `appendMessages` +
 * `startRun` + `getTodos`; `appendMessages` + `appendRunEvents` + `saveCheckpoint` / `finishRun`), and
 * nothing written when any part is refused.
 */
import { describe, expect, it } from "vitest";
import { DimsumError } from "../../src/errors.js";
import type { Message, Usage } from "../../src/llm/types.js";
import type { SessionRef, SessionStore } from "../../src/store/types.js";
import { toolTurn } from "../store/helpers.js";
import { describeBackends } from "./backends.js";
import { newStore } from "./session-store.js";

const a1: SessionRef = { userId: "A", sessionId: "window1" };
const b1: SessionRef = { userId: "B", sessionId: "window1" };
const usage: Usage = { inputTokens: 120, outputTokens: 30, totalTokens: 150 };
const user = (text: string): Message => ({ role: "user", content: text });
const answer = (text: string): Message => ({ role: "assistant", content: [{ type: "text", text }] });

async function rejection(promise: Promise<unknown>): Promise<DimsumError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DimsumError);
  return err as DimsumError;
}

/** The store's optional batch methods, which both backends implement. */
function batched(store: SessionStore) {
  const { beginTurn, saveRunStep } = store;
  if (!beginTurn || !saveRunStep) throw new Error("the store lacks beginTurn or saveRunStep");
  return { beginTurn: beginTurn.bind(store), saveRunStep: saveRunStep.bind(store) };
}

describeBackends("session turns in one write", (open) => {
  describe("beginTurn", () => {
    it("opens a new session, stores the input and starts the run", async () => {
      const { store } = await newStore(open, { now: () => 5 });
      const { beginTurn } = batched(store);
      const begun = await beginTurn(a1, {
        title: "first question",
        message: user("hello"),
        run: { runId: "r1", model: "fake:m", prompt: "hello" },
      });
      expect(begun.session).toMatchObject({ userId: "A", sessionId: "window1", title: "first question" });
      expect(begun.session.messageCount).toBe(1);
      expect(begun.messages).toEqual([]);
      expect(begun.appended).toMatchObject({ seq: 1, runId: "r1", message: user("hello"), compacted: false });
      expect(begun.run).toMatchObject({ id: "r1", status: "running", model: "fake:m", prompt: "hello" });
      expect(begun.run.startedAt).toBe(5);
      expect(begun.todos).toEqual([]);
      expect(await store.loadMessages(a1)).toEqual([begun.appended]);
      expect(await store.getRun(a1, "r1")).toEqual(begun.run);
    });

    it("reads what loadMessages, getSession and getTodos read before the input", async () => {
      let clock = 10;
      const { store } = await newStore(open, { now: () => clock });
      const { beginTurn } = batched(store);
      await store.openSession(a1, { title: "kept" });
      await store.appendMessages(a1, undefined, [user("one"), answer("two"), user("three")]);
      await store.saveTodos(a1, [{ id: 1, text: "buy milk", status: "pending" }]);
      const [first] = await store.loadMessages(a1);
      await store.compact(a1, { summary: "earlier: one", uptoMessageId: first?.id ?? 0 });
      const before = await store.loadMessages(a1);
      clock = 20;
      const begun = await beginTurn(a1, {
        title: "ignored",
        message: user("four"),
        run: { runId: "r2", model: "fake:m" },
      });
      expect(begun.messages).toEqual(before);
      expect(begun.appended.seq).toBe(4);
      expect(begun.session).toMatchObject({ title: "kept", summary: "earlier: one", messageCount: 4 });
      expect(begun.session.updatedAt).toBe(20);
      expect(begun.todos).toEqual([{ id: 1, text: "buy milk", status: "pending" }]);
      expect((await store.loadMessages(a1)).map((m) => m.seq)).toEqual([2, 3, 4]);
      // The other user's session of the same name is another session.
      const other = await beginTurn(b1, { message: user("x"), run: { runId: "r3", model: "fake:m" } });
      expect(other.messages).toEqual([]);
      expect(other.appended.seq).toBe(1);
    });

    it("writes nothing when the run id is taken", async () => {
      const { store } = await newStore(open);
      const { beginTurn } = batched(store);
      await beginTurn(a1, { message: user("one"), run: { runId: "same", model: "fake:m" } });
      const err = await rejection(
        beginTurn(a1, { message: user("two"), run: { runId: "same", model: "fake:m" } }),
      );
      expect(err.message).toMatch(/already exists/);
      expect((await store.loadMessages(a1)).map((m) => m.message)).toEqual([user("one")]);
      // Its numbers were not used up: the next append follows on.
      const [next] = await store.appendMessages(a1, undefined, [user("three")]);
      expect(next?.seq).toBe(2);
    });
  });

  describe("saveRunStep", () => {
    it("stores a tool round with its trace and checkpoint, then the answer with the run's end", async () => {
      let clock = 1;
      const { store } = await newStore(open, { now: () => clock });
      const { beginTurn, saveRunStep } = batched(store);
      await beginTurn(a1, { message: user("go"), run: { runId: "r1", model: "fake:m" } });
      await store.appendRunEvents(a1, "r1", [{ type: "run_start" }]);
      await store.saveTodos(a1, [{ id: 1, text: "step", status: "in_progress" }]);
      clock = 2;
      const round = toolTurn("t", 2);
      const checkpoint = { version: 1, iteration: 1 };
      const first = await saveRunStep(a1, "r1", {
        messages: round,
        events: [{ type: "turn_start" }, { type: "messages" }],
        checkpoint: { value: checkpoint },
        readTodos: true,
      });
      expect(first.messages.map((m) => [m.seq, m.runId, m.message])).toEqual(
        round.map((m, i) => [i + 2, "r1", m]),
      );
      expect(first.run).toBeUndefined();
      expect(first.todos).toEqual([{ id: 1, text: "step", status: "in_progress" }]);
      expect(await store.loadCheckpoint(a1, "r1")).toEqual({ checkpoint });
      expect((await store.getRun(a1, "r1"))?.status).toBe("running");

      clock = 3;
      const last = await saveRunStep(a1, "r1", {
        messages: [answer("done")],
        events: [{ type: "messages" }, { type: "done" }],
        finish: { status: "done", iterations: 2, usage, note: "iteration cap reached" },
      });
      expect(last.messages.map((m) => m.seq)).toEqual([5]);
      expect(last.todos).toBeUndefined();
      expect(last.run).toMatchObject({ id: "r1", status: "done", iterations: 2, usage, endedAt: 3 });
      expect(last.run?.note).toBe("iteration cap reached");
      expect(await store.getRun(a1, "r1")).toEqual(last.run);
      expect(await store.loadCheckpoint(a1, "r1")).toBeUndefined();
      const events = await store.getRunEvents(a1, "r1");
      expect(events.map((e) => [e.seq, e.type])).toEqual([
        [1, "run_start"],
        [2, "turn_start"],
        [3, "messages"],
        [4, "messages"],
        [5, "done"],
      ]);
      expect((await store.loadMessages(a1)).map((m) => m.seq)).toEqual([1, 2, 3, 4, 5]);
      expect((await store.getSession(a1))?.updatedAt).toBe(3);
    });

    it("saves a waiting checkpoint, keeping when it started waiting, and writes events alone", async () => {
      let clock = 100;
      const { store } = await newStore(open, { now: () => clock });
      const { beginTurn, saveRunStep } = batched(store);
      await beginTurn(a1, { message: user("go"), run: { runId: "r1", model: "fake:m" } });
      const checkpoint = { version: 1, iteration: 1, waitingFor: "call-1" };
      const saved = await saveRunStep(a1, "r1", {
        events: [{ type: "waiting" }],
        checkpoint: { value: checkpoint, waiting: true },
      });
      expect(saved.messages).toEqual([]);
      clock = 200;
      await saveRunStep(a1, "r1", { checkpoint: { value: checkpoint, waiting: true } });
      expect(await store.loadCheckpoint(a1, "r1")).toEqual({ checkpoint, waitingSince: 100 });
      await saveRunStep(a1, "r1", { events: [{ type: "resumed" }] });
      expect(await store.loadCheckpoint(a1, "r1")).toEqual({ checkpoint, waitingSince: 100 });
      await saveRunStep(a1, "r1", { checkpoint: { value: undefined } });
      expect(await store.loadCheckpoint(a1, "r1")).toBeUndefined();
      expect((await store.getRunEvents(a1, "r1")).map((e) => e.type)).toEqual(["waiting", "resumed"]);
      // Nothing at all to write still checks the run exists.
      expect(await saveRunStep(a1, "r1", {})).toEqual({ messages: [] });
    });

    it("writes nothing for a run or session that does not exist, or another user's run", async () => {
      const { store } = await newStore(open);
      const { beginTurn, saveRunStep } = batched(store);
      await beginTurn(a1, { message: user("go"), run: { runId: "r1", model: "fake:m" } });
      await store.openSession(b1);
      const step = { messages: [answer("x")], events: [{ type: "done" }] };
      expect((await rejection(saveRunStep(a1, "no-such-run", step))).message).toMatch(/no-such-run/);
      expect((await rejection(saveRunStep(b1, "r1", step))).message).toMatch(/r1/);
      const missing = { userId: "A", sessionId: "never-opened" };
      expect((await rejection(saveRunStep(missing, "r1", step))).message).toMatch(/does not exist/);
      expect((await store.loadMessages(a1)).map((m) => m.message)).toEqual([user("go")]);
      expect(await store.loadMessages(b1)).toEqual([]);
      expect(await store.getRunEvents(a1, "r1")).toEqual([]);
      const [next] = await store.appendMessages(a1, undefined, [user("next")]);
      expect(next?.seq).toBe(2);
    });

    it("refuses a tool call without its results, and a checkpoint with the run's end", async () => {
      const { store } = await newStore(open);
      const { beginTurn, saveRunStep } = batched(store);
      await beginTurn(a1, { message: user("go"), run: { runId: "r1", model: "fake:m" } });
      const [call] = toolTurn("t", 1);
      await rejection(saveRunStep(a1, "r1", { messages: [call as Message], events: [{ type: "messages" }] }));
      await rejection(
        saveRunStep(a1, "r1", {
          checkpoint: { value: { version: 1 } },
          finish: { status: "done", iterations: 1 },
        }),
      );
      expect(await store.loadMessages(a1)).toHaveLength(1);
      expect(await store.getRunEvents(a1, "r1")).toEqual([]);
      expect((await store.getRun(a1, "r1"))?.status).toBe("running");
    });
  });
});
