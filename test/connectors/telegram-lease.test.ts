/**
 * Two instances running the same polling Telegram connector over one database (SQLite file and
 * PostgreSQL): only the holder of the poll lease calls getUpdates; when it stops, the other takes
 * over from the stored offset, and no update is taken twice.
 */
import { afterEach, expect, it } from "vitest";
import { PollLease } from "../../src/connectors/poll-lease.js";
import {
  type ConnectorStore,
  createPostgresConnectorStore,
  createSqliteConnectorStore,
} from "../../src/connectors/store/connector-store.js";
import { telegramKind } from "../../src/connectors/telegram/telegram-kind.js";
import type { ConnectorDriver, ConnectorRecord, InboundMessage } from "../../src/connectors/types.js";
import { openDatabase } from "../../src/store/database.js";
import { FakeTelegram } from "../../src/testing/fake-telegram.js";
import { type Backend, describeBackends } from "../contracts/backends.js";
import { eventually } from "./harness.js";

const box = { seal: (plain: string) => plain, open: (sealed: string) => sealed };
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function storesOf(backend: Backend): [ConnectorStore, ConnectorStore] {
  if (backend.kind === "postgres") {
    return [createPostgresConnectorStore(backend.db, box), createPostgresConnectorStore(backend.db, box)];
  }
  const other = openDatabase(backend.file);
  cleanups.push(() => {
    other.close();
  });
  return [createSqliteConnectorStore(backend.db, box), createSqliteConnectorStore(other, box)];
}

const record: ConnectorRecord = {
  id: "tg",
  type: "telegram",
  name: "Support bot",
  agentId: "assistant",
  settings: {},
  userMode: "guest",
  enabled: true,
  createdBy: "owner",
  createdAt: 1,
  updatedAt: 1,
};

describeBackends("Telegram polling from one instance at a time", (open) => {
  it("polls only under the lease, and hands over on stop without taking an update twice", async () => {
    const backend = await open();
    const stores = storesOf(backend);
    await stores[0].connectors.save(record, {});
    const telegram = await FakeTelegram.start();
    cleanups.push(() => telegram.close());
    // Counts getUpdates calls in flight: two pollers would overlap.
    let polling = 0;
    let mostAtOnce = 0;
    const handle = telegram.handle.bind(telegram);
    telegram.handle = (url, raw, closed) => {
      if (!url.endsWith("/getUpdates")) return handle(url, raw, closed);
      polling++;
      mostAtOnce = Math.max(mostAtOnce, polling);
      return Promise.resolve(handle(url, raw, closed)).finally(() => {
        polling--;
      });
    };

    const received: Array<{ instance: string; text: string }> = [];
    const drivers = new Map<string, ConnectorDriver>();
    for (const [instance, store] of [
      ["A", stores[0]],
      ["B", stores[1]],
    ] as const) {
      const driver = telegramKind.create({
        connector: record,
        settings: telegramKind.parseSettings({ mode: "polling", baseUrl: telegram.url, pollTimeoutSec: 1 }),
        secrets: { botToken: telegram.token, webhookSecret: "secret" },
        state: store.mappings.stateOf(record.id),
        lease: new PollLease({
          leases: store.leases,
          connectorId: record.id,
          holder: instance,
          now: Date.now,
          retryMs: 50,
        }),
        log: { info: () => undefined, warn: () => undefined, error: () => undefined },
        receive: async (messages: InboundMessage[]) => {
          for (const m of messages) received.push({ instance, text: m.text });
        },
        press: async () => ({ ok: false, notice: "not in this test" }),
        report: () => undefined,
        backoff: () => 20,
        now: Date.now,
      });
      drivers.set(instance, driver);
      cleanups.push(() => driver.stop(false));
    }
    await drivers.get("A")!.start();
    await eventually(async () => (await stores[0].leases.current(record.id))?.holder === "A", "A polling");
    await drivers.get("B")!.start();

    for (const text of ["one", "two", "three"]) telegram.userMessage({ chatId: 1, userId: 2, text });
    await eventually(() => received.length === 3, "three updates");
    expect(received).toEqual([
      { instance: "A", text: "one" },
      { instance: "A", text: "two" },
      { instance: "A", text: "three" },
    ]);

    // While both ran, never two getUpdates at once (after A stops, its aborted call may linger in the fake).
    expect(mostAtOnce).toBe(1);
    await drivers.get("A")!.stop(false);
    await eventually(
      async () => (await stores[1].leases.current(record.id))?.holder === "B",
      "B taking over",
    );
    expect((await stores[1].leases.current(record.id))?.token).toBe(2);
    telegram.userMessage({ chatId: 1, userId: 2, text: "four" });
    await eventually(() => received.length === 4, "the fourth update");
    expect(received.at(-1)).toEqual({ instance: "B", text: "four" });
  });
});
