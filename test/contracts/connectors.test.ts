/**
 * The connectors' repositories (configs, mappings with inbound de-dup and driver state, outbox, poll
 * leases) on SQLite and on PostgreSQL, and what several instances rely on: a de-dup key, an outbox
 * item and a lease each go to exactly one of them.
 */
import { expect, it } from "vitest";
import { OutboxWorker } from "../../src/connectors/outbox-worker.js";
import type { Sealer } from "../../src/connectors/store/connector-repo.js";
import {
  type ConnectorStore,
  createPostgresConnectorStore,
  createSqliteConnectorStore,
} from "../../src/connectors/store/connector-store.js";
import { DEDUPE_RETENTION_MS } from "../../src/connectors/store/mapping-repo.js";
import type { ConnectorRecord, OutboundMessage } from "../../src/connectors/types.js";
import { openDatabase } from "../../src/store/database.js";
import { type Backend, describeBackends } from "./backends.js";

const T0 = Date.parse("2025-05-01T00:00:00Z");

/** A reversible stand-in for the server's secret box; values it did not seal cannot be opened. */
const box: Sealer = {
  seal: (plain) => `sealed:${Buffer.from(plain).toString("base64")}`,
  open: (sealed) =>
    sealed.startsWith("sealed:") ? Buffer.from(sealed.slice(7), "base64").toString() : undefined,
};

function storeOf(backend: Backend): ConnectorStore {
  return backend.kind === "sqlite"
    ? createSqliteConnectorStore(backend.db, box)
    : createPostgresConnectorStore(backend.db, box);
}

/** The repositories as another instance sees the same database (SQLite: another connection). */
function secondStore(backend: Backend, close: Array<() => void>): ConnectorStore {
  if (backend.kind === "postgres") return createPostgresConnectorStore(backend.db, box);
  const other = openDatabase(backend.file);
  close.push(() => other.close());
  return createSqliteConnectorStore(other, box);
}

async function exec(backend: Backend, sql: string, params: unknown[]): Promise<void> {
  if (backend.kind === "sqlite") {
    const values = [...sql.matchAll(/\$(\d+)/g)].map((m) => params[Number(m[1]) - 1]);
    backend.db.prepare(sql.replace(/\$\d+/g, "?")).run(...values);
  } else await backend.db.run(sql, params);
}

async function addChannel(backend: Backend, id: string): Promise<void> {
  await exec(
    backend,
    "INSERT INTO team_channels (id, kind, name, created_by, created_at, updated_at) VALUES ($1, 'direct', $2, 'u', $3, $3)",
    [id, `channel ${id}`, T0],
  );
}

/** SQLite's connector_users has a foreign key to users (PostgreSQL's users live in another migration). */
async function addUser(backend: Backend, id: string): Promise<void> {
  if (backend.kind !== "sqlite") return;
  await exec(
    backend,
    "INSERT INTO users (id, username, password_hash, role, created_at, updated_at) VALUES ($1, $1, 'x', 'guest', $2, $2)",
    [id, T0],
  );
}

async function deleteChannel(backend: Backend, id: string): Promise<void> {
  await exec(backend, "DELETE FROM team_channels WHERE id = $1", [id]);
}

function record(id: string, extra: Partial<ConnectorRecord> = {}): ConnectorRecord {
  return {
    id,
    type: "telegram",
    name: `bot ${id}`,
    agentId: "assistant",
    settings: { mode: "polling", pollTimeoutSec: 25 },
    userMode: "guest",
    enabled: false,
    createdBy: "owner",
    createdAt: T0,
    updatedAt: T0,
    ...extra,
  };
}

const msg = (chatId: string, text: string, extra: Partial<OutboundMessage> = {}): OutboundMessage => ({
  chatId,
  text,
  part: 1,
  parts: 1,
  ...extra,
});

describeBackends("connector repository", (open) => {
  it("saves, reads, lists oldest first, seals secrets with previews, updates and deletes", async () => {
    const backend = await open();
    const { connectors } = storeOf(backend);
    const secrets = { botToken: "123456:ABCDEFGHIJKLMNOPQRSTUVWXYZ", webhookSecret: "s3cret-value-long" };
    await connectors.save(record("c-b", { createdAt: T0 + 1, userMode: "user", userId: "u1" }), secrets);
    await connectors.save(record("c-a", { createdAt: T0 + 1, type: "webhook" }), {});
    await connectors.save(record("c-0", { createdAt: T0 }), {});
    const stored = await connectors.get("c-b");
    expect(stored?.record).toEqual(record("c-b", { createdAt: T0 + 1, userMode: "user", userId: "u1" }));
    expect(stored?.secrets).toEqual(secrets);
    expect(stored?.previews).toEqual({ botToken: "123…WXYZ", webhookSecret: "s3c…long" });
    expect((await connectors.get("c-a"))?.secrets).toEqual({});
    expect(await connectors.record("c-b")).toEqual(stored?.record);
    expect(await connectors.get("missing")).toBeUndefined();
    expect(await connectors.record("missing")).toBeUndefined();
    expect((await connectors.list()).map((c) => c.record.id)).toEqual(["c-0", "c-a", "c-b"]);

    // An upsert replaces fields and secrets, but never the type, creator or creation time.
    await connectors.save(
      record("c-b", { type: "feishu", name: "renamed", createdBy: "x", createdAt: 5, updatedAt: T0 + 9 }),
      { botToken: "short" },
    );
    const changed = await connectors.get("c-b");
    expect(changed?.record).toMatchObject({
      type: "telegram",
      name: "renamed",
      createdBy: "owner",
      createdAt: T0 + 1,
    });
    expect(changed?.record.userId).toBeUndefined();
    expect(changed?.secrets).toEqual({ botToken: "short" });
    expect(changed?.previews).toEqual({ botToken: "…" });

    await connectors.setEnabled("c-a", true, T0 + 20);
    expect(await connectors.record("c-a")).toMatchObject({ enabled: true, updatedAt: T0 + 20 });
    expect(await connectors.delete("c-a")).toBe(true);
    expect(await connectors.delete("c-a")).toBe(false);
    expect((await connectors.list()).map((c) => c.record.id)).toEqual(["c-0", "c-b"]);
  });

  it("reports secrets it cannot open as undefined, keeping the record", async () => {
    const backend = await open();
    const { connectors } = storeOf(backend);
    await connectors.save(record("c"), { botToken: "123456:ABCDEFGHIJKLMNOPQRSTUVWXYZ" });
    await exec(backend, "UPDATE connectors SET secrets_enc = 'garbage' WHERE id = $1", ["c"]);
    const stored = await connectors.get("c");
    expect(stored?.secrets).toBeUndefined();
    expect(stored?.record.id).toBe("c");
  });

  it("deleting a connector removes its mappings, de-dup keys, outbox, state and lease", async () => {
    const backend = await open();
    const store = storeOf(backend);
    await store.connectors.save(record("c"), {});
    await store.connectors.save(record("keep"), {});
    await addChannel(backend, "ch1");
    await addUser(backend, "u1");
    for (const id of ["c", "keep"]) {
      await store.mappings.setUser(id, "ext-u", "u1");
      await store.mappings.setChannel(id, `chat-${id}`, "ch1");
      await store.mappings.claim(id, "k1", T0);
      await store.mappings.stateOf(id).set("offset", "7");
      await store.outbox.add(id, [msg("chat", "hi")], T0);
      await store.leases.acquire(id, "A", 1000, T0);
    }
    expect(await store.connectors.delete("c")).toBe(true);
    // Made again under the same id, it starts with nothing.
    await store.connectors.save(record("c"), {});
    expect(await store.mappings.userFor("c", "ext-u")).toBeUndefined();
    expect(await store.mappings.channelFor("c", "chat-c")).toBeUndefined();
    expect(await store.mappings.claim("c", "k1", T0)).toBe(true);
    expect(await store.mappings.stateOf("c").get("offset")).toBeUndefined();
    expect(await store.outbox.list("c")).toEqual([]);
    expect(await store.leases.current("c")).toBeUndefined();
    // The other connector keeps everything.
    expect(await store.mappings.userFor("keep", "ext-u")).toBe("u1");
    expect(await store.mappings.chatOf("ch1")).toEqual({ connectorId: "keep", chatId: "chat-keep" });
    expect(await store.mappings.claim("keep", "k1", T0)).toBe(false);
    expect(await store.mappings.stateOf("keep").get("offset")).toBe("7");
    expect(await store.outbox.counts("keep")).toEqual({ pending: 1, failed: 0 });
    expect((await store.leases.current("keep"))?.holder).toBe("A");
  });
});

describeBackends("connector mappings", (open) => {
  it("maps external users and chats, re-maps them, finds a channel's chat, and forgets a deleted channel", async () => {
    const backend = await open();
    const { connectors, mappings } = storeOf(backend);
    await connectors.save(record("c"), {});
    await connectors.save(record("d"), {});
    await addChannel(backend, "ch1");
    await addChannel(backend, "ch2");
    await addUser(backend, "u1");
    await addUser(backend, "u2");
    expect(await mappings.userFor("c", "100")).toBeUndefined();
    await mappings.setUser("c", "100", "u1");
    expect(await mappings.userFor("c", "100")).toBe("u1");
    expect(await mappings.userFor("d", "100")).toBeUndefined();
    await mappings.setUser("c", "100", "u2");
    expect(await mappings.userFor("c", "100")).toBe("u2");

    expect(await mappings.channelFor("c", "chat")).toBeUndefined();
    expect(await mappings.chatOf("ch1")).toBeUndefined();
    await mappings.setChannel("c", "chat", "ch1");
    expect(await mappings.channelFor("c", "chat")).toBe("ch1");
    expect(await mappings.chatOf("ch1")).toEqual({ connectorId: "c", chatId: "chat" });
    await mappings.setChannel("c", "chat", "ch2");
    expect(await mappings.channelFor("c", "chat")).toBe("ch2");
    expect(await mappings.chatOf("ch1")).toBeUndefined();
    await deleteChannel(backend, "ch2");
    expect(await mappings.channelFor("c", "chat")).toBeUndefined();
  });

  it("takes an inbound key once, gives it back on release, and forgets keys past the retention", async () => {
    const backend = await open();
    const { connectors, mappings } = storeOf(backend);
    await connectors.save(record("c"), {});
    await connectors.save(record("d"), {});
    expect(await mappings.claim("c", "update:1", T0)).toBe(true);
    expect(await mappings.claim("c", "update:1", T0 + 1)).toBe(false);
    expect(await mappings.claim("d", "update:1", T0)).toBe(true);
    await mappings.release("c", "update:1");
    expect(await mappings.claim("c", "update:1", T0 + 2)).toBe(true);
    // A new key taken after the retention prunes the old ones.
    expect(await mappings.claim("c", "update:2", T0 + DEDUPE_RETENTION_MS + 10)).toBe(true);
    expect(await mappings.claim("c", "update:1", T0 + DEDUPE_RETENTION_MS + 11)).toBe(true);
    expect(await mappings.claim("c", "update:2", T0 + DEDUPE_RETENTION_MS + 12)).toBe(false);
  });

  it("of two instances taking the same inbound keys at once, exactly one takes each", async () => {
    const backend = await open();
    const close: Array<() => void> = [];
    try {
      const a = storeOf(backend);
      const b = secondStore(backend, close);
      await a.connectors.save(record("c"), {});
      const keys = Array.from({ length: 30 }, (_, i) => `event:${i}`);
      const results = await Promise.all(
        keys.flatMap((k) => [a.mappings.claim("c", k, T0), b.mappings.claim("c", k, T0)]),
      );
      for (let i = 0; i < keys.length; i++) {
        expect([results[2 * i], results[2 * i + 1]].sort()).toEqual([false, true]);
      }
    } finally {
      for (const c of close) c();
    }
  });

  it("keeps each connector's driver state by key", async () => {
    const backend = await open();
    const { connectors, mappings } = storeOf(backend);
    await connectors.save(record("c"), {});
    await connectors.save(record("d"), {});
    const state = mappings.stateOf("c");
    expect(await state.get("telegram.offset")).toBeUndefined();
    await state.set("telegram.offset", "41");
    await state.set("telegram.offset", "42");
    await state.set("other", "x");
    expect(await state.get("telegram.offset")).toBe("42");
    expect(await mappings.stateOf("c").get("other")).toBe("x");
    expect(await mappings.stateOf("d").get("telegram.offset")).toBeUndefined();
  });

  it("fences state writes by the poll lease: a superseded or released holder's token moves nothing", async () => {
    const backend = await open();
    const { connectors, mappings, leases } = storeOf(backend);
    await connectors.save(record("c"), {});
    const state = mappings.stateOf("c");
    // No lease yet: no token is current.
    expect(await state.set("offset", "1", 1)).toBe(false);
    const a = await leases.acquire("c", "A", 1000, T0);
    expect(await state.set("offset", "10", a!.token)).toBe(true);
    const b = await leases.acquire("c", "B", 1000, T0 + 1000);
    expect(b?.token).toBe(a!.token + 1);
    expect(await state.set("offset", "11", a!.token)).toBe(false);
    expect(await state.get("offset")).toBe("10");
    expect(await state.set("offset", "12", b!.token)).toBe(true);
    await leases.release("c", "B", b!.token);
    expect(await state.set("offset", "13", b!.token)).toBe(false);
    expect(await state.get("offset")).toBe("12");
    // Unfenced writes (drivers without a lease) always land.
    expect(await state.set("offset", "14")).toBe(true);
    expect(await state.get("offset")).toBe("14");
  });
});

describeBackends("connector outbox", (open) => {
  it("queues in order, shows each chat's head, counts and lists rows", async () => {
    const backend = await open();
    const { connectors, outbox } = storeOf(backend);
    await connectors.save(record("c"), {});
    await connectors.save(record("d"), {});
    expect(await outbox.heads("c")).toEqual([]);
    expect(await outbox.nextDue("c")).toBeUndefined();
    await outbox.add(
      "c",
      [msg("chat-1", "one", { part: 1, parts: 2, runId: "r1" }), msg("chat-2", "two")],
      T0,
    );
    await outbox.add("c", [msg("chat-1", "three", { editMessageId: "55" })], T0 + 5);
    await outbox.add("d", [msg("chat-1", "other")], T0);
    const rows = await outbox.list("c");
    expect(rows.map((r) => r.message.text)).toEqual(["one", "two", "three"]);
    expect(rows[0]).toMatchObject({
      connectorId: "c",
      attempts: 0,
      nextAttemptAt: T0,
      status: "pending",
      message: { chatId: "chat-1", text: "one", part: 1, parts: 2, runId: "r1" },
    });
    expect(rows[0]?.lastError).toBeUndefined();
    expect(rows[2]?.message.editMessageId).toBe("55");
    expect(rows[0]!.id < rows[1]!.id && rows[1]!.id < rows[2]!.id).toBe(true);
    expect((await outbox.heads("c")).map((i) => i.message.text)).toEqual(["one", "two"]);
    expect(await outbox.counts("c")).toEqual({ pending: 3, failed: 0 });
    expect(await outbox.nextDue("c")).toBe(T0);
    expect(await outbox.counts("none")).toEqual({ pending: 0, failed: 0 });
  });

  it("claims due, unclaimed heads only; settling ends the claim; a lapsed claim is taken over", async () => {
    const backend = await open();
    const { connectors, outbox } = storeOf(backend);
    await connectors.save(record("c"), {});
    await outbox.add("c", [msg("a", "a1"), msg("a", "a2"), msg("b", "b1")], T0);
    await outbox.add("c", [msg("z", "later")], T0 + 1000);

    const first = await outbox.claim("c", "A", T0, 60_000);
    expect(first.map((i) => i.message.text)).toEqual(["a1", "b1"]);
    // Claimed heads are nobody else's; the next row of a chat waits for its head.
    expect(await outbox.claim("c", "B", T0 + 10, 60_000)).toEqual([]);
    expect(await outbox.nextDue("c")).toBe(T0 + 1000);
    const [a1, b1] = first as [(typeof first)[0], (typeof first)[0]];

    await outbox.done(a1.id);
    expect((await outbox.claim("c", "B", T0 + 20, 60_000)).map((i) => i.message.text)).toEqual(["a2"]);

    // Settling needs the claim's holder.
    expect(await outbox.retryLater(b1.id, "B", "nope", T0 + 500)).toBe(false);
    expect(await outbox.retryLater(b1.id, "A", "HTTP 502", T0 + 500)).toBe(true);
    expect((await outbox.list("c")).find((r) => r.id === b1.id)).toMatchObject({
      attempts: 1,
      lastError: "HTTP 502",
      nextAttemptAt: T0 + 500,
      status: "pending",
    });
    expect(await outbox.retryLater(b1.id, "A", "again", T0 + 600)).toBe(false);
    expect(await outbox.claim("c", "A", T0 + 499, 60_000)).toEqual([]);
    expect((await outbox.claim("c", "B", T0 + 1000, 60_000)).map((i) => i.message.text)).toEqual([
      "b1",
      "later",
    ]);

    // A holder that died: its claim on a2 runs out and another drainer takes the item.
    expect(await outbox.claim("c", "C", T0 + 20 + 60_000 - 1, 60_000)).toEqual([]);
    const over = await outbox.claim("c", "C", T0 + 20 + 60_000 + 1, 60_000);
    expect(over.map((i) => i.message.text)).toEqual(["a2"]);
    expect(await outbox.fail(over[0]!.id, "B", "stale holder")).toBe(false);
    expect(await outbox.fail(over[0]!.id, "C", "HTTP 401")).toBe(true);
    expect(await outbox.counts("c")).toEqual({ pending: 2, failed: 1 });
    expect((await outbox.heads("c")).map((i) => i.message.text)).toEqual(["b1", "later"]);
  });

  it("rewrites a claimed row and unclaims a cut-off send, each due again at once", async () => {
    const backend = await open();
    const { connectors, outbox } = storeOf(backend);
    await connectors.save(record("c"), {});
    await outbox.add("c", [msg("a", "edit me", { editMessageId: "9" }), msg("b", "b1")], T0);
    const [edit, b1] = await outbox.claim("c", "A", T0, 60_000);
    expect(await outbox.rewrite(edit!.id, "B", msg("a", "x"))).toBe(false);
    expect(await outbox.rewrite(edit!.id, "A", msg("a", "as new"))).toBe(true);
    expect(await outbox.unclaim(b1!.id, "B")).toBe(false);
    expect(await outbox.unclaim(b1!.id, "A")).toBe(true);
    const again = await outbox.claim("c", "B", T0 + 1, 60_000);
    expect(again.map((i) => i.message)).toEqual([msg("a", "as new"), msg("b", "b1")]);
    expect(again[0]?.message.editMessageId).toBeUndefined();
    expect(again.map((i) => i.attempts)).toEqual([0, 0]);

    // A worker restarting under B's name takes B's claims back; other holders' claims stay.
    await outbox.add("c", [msg("c", "c1")], T0);
    expect((await outbox.claim("c", "C", T0 + 2, 60_000)).map((i) => i.message.text)).toEqual(["c1"]);
    expect(await outbox.unclaimAll("c", "B")).toBe(2);
    expect(await outbox.unclaimAll("other", "C")).toBe(0);
    expect((await outbox.claim("c", "B2", T0 + 3, 60_000)).map((i) => i.message.text)).toEqual([
      "as new",
      "b1",
    ]);
  });

  it("of concurrent claims by two instances each item goes to one", async () => {
    const backend = await open();
    const close: Array<() => void> = [];
    try {
      const a = storeOf(backend);
      const b = secondStore(backend, close);
      await a.connectors.save(record("c"), {});
      await a.outbox.add(
        "c",
        Array.from({ length: 40 }, (_, i) => msg(`chat-${i}`, `m${i}`)),
        T0,
      );
      const claims = await Promise.all(
        Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? a : b).outbox.claim("c", `H${i}`, T0, 60_000)),
      );
      const ids = claims.flat().map((item) => item.id);
      expect(ids).toHaveLength(40);
      expect(new Set(ids).size).toBe(40);
    } finally {
      for (const c of close) c();
    }
  });

  it("two workers drain one outbox together: every reply sent once, each chat in order", async () => {
    const backend = await open();
    const close: Array<() => void> = [];
    const workers: OutboxWorker[] = [];
    try {
      const a = storeOf(backend);
      const b = secondStore(backend, close);
      await a.connectors.save(record("c"), {});
      const chats = ["x", "y", "z"];
      const perChat = 8;
      const sent: Array<{ worker: string; chatId: string; text: string }> = [];
      for (let i = 0; i < perChat; i++) {
        await a.outbox.add(
          "c",
          chats.map((chat) => msg(chat, `${chat}${i}`)),
          T0,
        );
      }
      let failures = 0;
      for (const [name, store] of [
        ["A", a],
        ["B", b],
      ] as const) {
        const worker = new OutboxWorker({
          connectorId: "c",
          outbox: store.outbox,
          holder: name,
          send: async (message) => {
            // Yield so the other worker's claims interleave with this send.
            await new Promise((resolve) => setImmediate(resolve));
            sent.push({ worker: name, chatId: message.chatId, text: message.text });
            return undefined;
          },
          policy: { baseDelayMs: 10, maxDelayMs: 20 },
          now: () => T0,
          random: () => 0.5,
          pollMs: 20,
          onDelivered: () => undefined,
          onFailure: () => {
            failures++;
          },
          onCrash: (err) => {
            throw err;
          },
        });
        workers.push(worker);
      }
      for (const worker of workers) worker.start();
      for (;;) {
        if ((await a.outbox.counts("c")).pending === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await Promise.all(workers.map((w) => w.stop()));
      expect(failures).toBe(0);
      expect(sent).toHaveLength(chats.length * perChat);
      for (const chat of chats) {
        expect(sent.filter((s) => s.chatId === chat).map((s) => s.text)).toEqual(
          Array.from({ length: perChat }, (_, i) => `${chat}${i}`),
        );
      }
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
      for (const c of close) c();
    }
  });
});

describeBackends("connector poll leases", (open) => {
  it("grants a free lease, refuses others while it runs, extends its holder's, and hands over after a lapse", async () => {
    const backend = await open();
    const { connectors, leases } = storeOf(backend);
    await connectors.save(record("c"), {});
    await connectors.save(record("d"), {});
    expect(await leases.current("c")).toBeUndefined();
    const first = await leases.acquire("c", "A", 1000, T0);
    expect(first).toEqual({ connectorId: "c", holder: "A", token: 1, expiresAt: T0 + 1000 });
    expect(await leases.acquire("c", "B", 1000, T0 + 999)).toBeUndefined();
    expect(await leases.acquire("d", "B", 1000, T0)).toMatchObject({ holder: "B", token: 1 });
    // Its holder acquiring again extends it under the same token.
    expect(await leases.acquire("c", "A", 1000, T0 + 500)).toEqual({ ...first, expiresAt: T0 + 1500 });
    expect(await leases.renew("c", "A", 1, 1000, T0 + 900)).toEqual({ ...first, expiresAt: T0 + 1900 });
    expect(await leases.renew("c", "B", 1, 1000, T0 + 900)).toBeUndefined();
    expect(await leases.renew("c", "A", 2, 1000, T0 + 900)).toBeUndefined();

    // A lapses; B takes over with a higher token; A's renewal and release are refused.
    const second = await leases.acquire("c", "B", 1000, T0 + 1900);
    expect(second).toEqual({ connectorId: "c", holder: "B", token: 2, expiresAt: T0 + 2900 });
    expect(await leases.renew("c", "A", 1, 1000, T0 + 1901)).toBeUndefined();
    expect(await leases.release("c", "A", 1)).toBe(false);
    expect(await leases.current("c")).toEqual({ holder: "B", token: 2, expiresAt: T0 + 2900 });

    // Released, it is free at once, and the next holder's token is higher still.
    expect(await leases.release("c", "B", 2)).toBe(true);
    expect(await leases.release("c", "B", 2)).toBe(false);
    expect((await leases.current("c"))?.holder).toBeUndefined();
    expect(await leases.renew("c", "B", 2, 1000, T0 + 2000)).toBeUndefined();
    expect(await leases.acquire("c", "A", 1000, T0 + 2000)).toMatchObject({ holder: "A", token: 3 });
  });

  it("a holder coming back after its own lapse starts a new tenure; renewing one nobody took is allowed", async () => {
    const backend = await open();
    const { connectors, leases } = storeOf(backend);
    await connectors.save(record("c"), {});
    await leases.acquire("c", "A", 1000, T0);
    expect(await leases.renew("c", "A", 1, 1000, T0 + 5000)).toMatchObject({
      token: 1,
      expiresAt: T0 + 6000,
    });
    expect(await leases.acquire("c", "A", 1000, T0 + 10_000)).toMatchObject({
      token: 2,
      expiresAt: T0 + 11_000,
    });
  });

  it("of instances acquiring one free lease at once, exactly one gets it", async () => {
    const backend = await open();
    const close: Array<() => void> = [];
    try {
      const a = storeOf(backend);
      const b = secondStore(backend, close);
      for (let i = 0; i < 10; i++) await a.connectors.save(record(`c${i}`), {});
      for (let i = 0; i < 10; i++) {
        const got = await Promise.all([
          a.leases.acquire(`c${i}`, "A", 1000, T0),
          b.leases.acquire(`c${i}`, "B", 1000, T0),
          a.leases.acquire(`c${i}`, "C", 1000, T0),
        ]);
        const winners = got.filter((lease) => lease !== undefined);
        expect(winners).toHaveLength(1);
        expect(winners[0]?.token).toBe(1);
        expect((await b.leases.current(`c${i}`))?.holder).toBe(winners[0]?.holder);
      }
    } finally {
      for (const c of close) c();
    }
  });
});
