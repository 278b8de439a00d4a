/**
 * Appends to one session from several instances (each with its own pool) on one PostgreSQL
 * database: sequence numbers never collide and stay gap-free, for messages and for trace events;
 * rows written before the append counters (or copied by `dimsum migrate`) are numbered on from.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgres, type PgDatabase } from "../../src/store/postgres/pg-database.js";
import { PgSessionStore } from "../../src/store/postgres/pg-session-store.js";
import type { RunEventInput } from "../../src/store/types.js";
import { createTestDatabase, postgresAvailable } from "../support/postgres.js";

/** A trace event as the agent loop records them. */
function delta(text: string): RunEventInput {
  const event = { type: "text_delta", text };
  return event;
}

describe.skipIf(!postgresAvailable)("session appends from several instances on PostgreSQL", () => {
  let created: { url: string; drop(): Promise<void> };
  const pools: PgDatabase[] = [];
  let stores: PgSessionStore[] = [];

  beforeAll(async () => {
    created = await createTestDatabase();
    for (let i = 0; i < 3; i++) pools.push(await openPostgres(created.url, { maxConnections: 4 }));
    stores = pools.map((db) => new PgSessionStore(db));
  });
  afterAll(async () => {
    for (const db of pools) await db.close();
    await created?.drop();
  });

  it("number concurrent message batches 1..n without collisions or gaps", async () => {
    const ref = { userId: "channel:c1", sessionId: "agent:a1" };
    await stores[0]?.openSession(ref);
    const batches = Array.from({ length: 24 }, (_, i) =>
      (stores[i % stores.length] as PgSessionStore).appendMessages(ref, `run-${i}`, [
        { role: "user", content: `question ${i}` },
        { role: "assistant", content: [{ type: "text", text: `answer ${i}` }] },
      ]),
    );
    const stored = (await Promise.all(batches)).flat();
    const seqs = stored.map((m) => m.seq).sort((a, b) => a - b);
    expect(seqs).toEqual(Array.from({ length: 48 }, (_, i) => i + 1));
    // Each batch got consecutive numbers, in the order of its messages.
    for (let i = 0; i < stored.length; i += 2) expect(stored[i + 1]?.seq).toBe((stored[i]?.seq ?? 0) + 1);
    const loaded = await (stores[2] as PgSessionStore).loadMessages(ref);
    expect(loaded.map((m) => m.seq)).toEqual(seqs);
    const session = await stores[1]?.getSession(ref);
    expect(session?.messageCount).toBe(48);
  });

  it("number concurrent trace event batches of one run without collisions", async () => {
    const ref = { userId: "channel:c1", sessionId: "agent:a2" };
    await stores[0]?.openSession(ref);
    await stores[0]?.startRun(ref, { runId: "run-events", model: "fake:m" });
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (stores[i % stores.length] as PgSessionStore).appendRunEvents(ref, "run-events", [
          delta(`a${i}`),
          delta(`b${i}`),
          delta(`c${i}`),
        ]),
      ),
    );
    const events = await (stores[1] as PgSessionStore).getRunEvents(ref, "run-events");
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 36 }, (_, i) => i + 1));
  });

  it("numbers on from rows stored without the counters", async () => {
    const ref = { userId: "person", sessionId: "copied" };
    const db = pools[0] as PgDatabase;
    const store = stores[0] as PgSessionStore;
    await store.openSession(ref);
    await store.appendMessages(ref, undefined, [{ role: "user", content: "one" }]);
    await store.startRun(ref, { runId: "run-copied", model: "fake:m" });
    await store.appendRunEvents(ref, "run-copied", [delta("x")]);
    // As `dimsum migrate` leaves them: rows in, counters unset; and a row a version without the
    // counter appended (its seq past the counter).
    await db.run("UPDATE sessions SET last_seq = NULL WHERE session_key = 'copied'");
    await db.run("UPDATE runs SET last_event_seq = NULL WHERE id = 'run-copied'");
    const sessionId = (await db.one<{ id: number }>("SELECT id FROM sessions WHERE session_key = 'copied'"))
      ?.id;
    await db.run(
      `INSERT INTO messages (session_id, seq, role, content_json, created_at)
       VALUES ($1, 2, 'assistant', '"two"', 0)`,
      [sessionId],
    );
    const more = await store.appendMessages(ref, undefined, [{ role: "user", content: "three" }]);
    expect(more.map((m) => m.seq)).toEqual([3]);
    await db.run("UPDATE sessions SET last_seq = 1 WHERE session_key = 'copied'");
    const after = await (stores[1] as PgSessionStore).appendMessages(ref, undefined, [
      { role: "user", content: "four" },
    ]);
    expect(after.map((m) => m.seq)).toEqual([4]);
    await store.appendRunEvents(ref, "run-copied", [delta("y")]);
    const events = await store.getRunEvents(ref, "run-copied");
    expect(events.map((e) => e.seq)).toEqual([1, 2]);
  });

  it("says which session or run is missing instead of writing nothing", async () => {
    const store = stores[0] as PgSessionStore;
    const missing = { userId: "nobody", sessionId: "none" };
    await expect(store.appendMessages(missing, undefined, [{ role: "user", content: "x" }])).rejects.toThrow(
      /does not exist/,
    );
    await expect(store.appendMessages(missing, undefined, [])).rejects.toThrow(/does not exist/);
    const ref = { userId: "person", sessionId: "runs" };
    await store.openSession(ref);
    await expect(store.appendRunEvents(ref, "no-such-run", [delta("x")])).rejects.toThrow(/no-such-run/);
    await expect(store.finishRun(ref, "no-such-run", { status: "done", iterations: 1 })).rejects.toThrow(
      /no-such-run/,
    );
    await expect(store.saveTodos(missing, [])).rejects.toThrow(/does not exist/);
  });
});
