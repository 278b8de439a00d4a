/**
 * Turns started and steps written in one statement each (`beginTurn`, `saveRunStep`) from several
 * instances (each with its own pool) into one session on PostgreSQL: message numbers stay 1..n without
 * collisions or gaps, mixed with plain appends, and every run's trace is numbered 1..k.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgres, type PgDatabase } from "../../src/store/postgres/pg-database.js";
import { PgSessionStore } from "../../src/store/postgres/pg-session-store.js";
import { createTestDatabase, postgresAvailable } from "../support/postgres.js";

describe.skipIf(!postgresAvailable)("turns in one statement from several instances on PostgreSQL", () => {
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

  it("number concurrent turns, steps and appends of one session 1..n", async () => {
    const ref = { userId: "channel:c1", sessionId: "agent:a1" };
    const store = (i: number) => stores[i % stores.length] as PgSessionStore;
    const turns = Array.from({ length: 12 }, async (_, i) => {
      const runId = `run-${i}`;
      const begun = await store(i).beginTurn(ref, {
        title: "concurrent",
        message: { role: "user", content: `question ${i}` },
        run: { runId, model: "fake:m" },
      });
      const step = await store(i + 1).saveRunStep(ref, runId, {
        messages: [{ role: "assistant", content: [{ type: "text", text: `answer ${i}` }] }],
        events: [{ type: "messages" }, { type: "done" }],
        finish: { status: "done", iterations: 1 },
      });
      return [begun.appended, ...step.messages];
    });
    const appends = Array.from({ length: 6 }, (_, i) =>
      store(i + 2).appendMessages(ref, undefined, [{ role: "user", content: `aside ${i}` }]),
    );
    const stored = [...(await Promise.all(turns)).flat(), ...(await Promise.all(appends)).flat()];
    const seqs = stored.map((m) => m.seq).sort((a, b) => a - b);
    expect(seqs).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect((await store(0).loadMessages(ref)).map((m) => m.seq)).toEqual(seqs);
    expect((await store(1).getSession(ref))?.messageCount).toBe(30);
    for (let i = 0; i < 12; i++) {
      const events = await store(i).getRunEvents(ref, `run-${i}`);
      expect(events.map((e) => e.seq)).toEqual([1, 2]);
      expect((await store(i).getRun(ref, `run-${i}`))?.status).toBe("done");
    }
  });
});
