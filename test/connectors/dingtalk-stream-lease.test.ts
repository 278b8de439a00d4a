/**
 * Two instances running the same Stream-mode DingTalk connector over one database (SQLite file and
 * PostgreSQL): only the lease holder keeps the Stream connection open, so each message reaches one
 * instance; when it stops, the other connects and takes over.
 */
import { afterEach, expect, it } from "vitest";
import { dingtalkKind } from "../../src/connectors/dingtalk/dingtalk-kind.js";
import { PollLease } from "../../src/connectors/poll-lease.js";
import {
  type ConnectorStore,
  createPostgresConnectorStore,
  createSqliteConnectorStore,
} from "../../src/connectors/store/connector-store.js";
import type { ConnectorDriver, ConnectorRecord, InboundMessage } from "../../src/connectors/types.js";
import { openDatabase } from "../../src/store/database.js";
import { FakeDingTalk } from "../../src/testing/fake-dingtalk.js";
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
  id: "dt",
  type: "dingtalk",
  name: "DingTalk bot",
  agentId: "assistant",
  settings: {},
  userMode: "guest",
  enabled: true,
  createdBy: "owner",
  createdAt: 1,
  updatedAt: 1,
};

describeBackends("DingTalk Stream from one instance at a time", (open) => {
  it("connects only under the lease and hands over on stop", async () => {
    const backend = await open();
    const stores = storesOf(backend);
    await stores[0].connectors.save(record, {});
    const dingtalk = await FakeDingTalk.start();
    cleanups.push(() => dingtalk.close());
    const received: Array<{ instance: string; text: string }> = [];
    const drivers = new Map<string, ConnectorDriver>();
    for (const [instance, store] of [
      ["A", stores[0]],
      ["B", stores[1]],
    ] as const) {
      const driver = dingtalkKind.create({
        connector: record,
        settings: dingtalkKind.parseSettings({ clientId: dingtalk.clientId, baseUrl: dingtalk.url }),
        secrets: { clientSecret: dingtalk.clientSecret },
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
    await dingtalk.waitUntil(() => dingtalk.openStreams === 1, "A's stream");
    await drivers.get("B")!.start();
    expect((await stores[1].leases.current(record.id))?.holder).toBe("A");

    for (const text of ["one", "two"]) {
      dingtalk.pushRobotMessage(dingtalk.robotMessage({ conversationId: "cid", text, senderStaffId: "s" }));
    }
    await eventually(() => received.length === 2, "two messages");
    expect(received).toEqual([
      { instance: "A", text: "one" },
      { instance: "A", text: "two" },
    ]);
    expect(dingtalk.connections.length).toBe(1);

    await drivers.get("A")!.stop(false);
    await eventually(
      async () => (await stores[1].leases.current(record.id))?.holder === "B",
      "B taking over",
    );
    await dingtalk.waitUntil(
      () => dingtalk.openStreams === 1 && dingtalk.connections.length === 2,
      "B's stream",
    );
    dingtalk.pushRobotMessage(
      dingtalk.robotMessage({ conversationId: "cid", text: "three", senderStaffId: "s" }),
    );
    await eventually(() => received.length === 3, "the third message");
    expect(received.at(-1)).toEqual({ instance: "B", text: "three" });
    // The chat's route was stored where either instance can answer it.
    expect(await stores[0].mappings.stateOf(record.id).get("dingtalk.route:cid")).toContain("sendBySession");
  });
});
