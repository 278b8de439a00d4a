/**
 * The connector state an approval prompt's ticket lives in, on both backends: entries listed by key
 * prefix (taken literally, `%` and `_` included) and deleted, per connector.
 */
import { expect, it } from "vitest";
import type { Sealer } from "../../src/connectors/store/connector-repo.js";
import {
  type ConnectorStore,
  createPostgresConnectorStore,
  createSqliteConnectorStore,
} from "../../src/connectors/store/connector-store.js";
import type { ConnectorRecord } from "../../src/connectors/types.js";
import { type Backend, describeBackends } from "../contracts/backends.js";

const box: Sealer = { seal: (plain) => plain, open: (sealed) => sealed };

function storeOf(backend: Backend): ConnectorStore {
  return backend.kind === "sqlite"
    ? createSqliteConnectorStore(backend.db, box)
    : createPostgresConnectorStore(backend.db, box);
}

function record(id: string): ConnectorRecord {
  return {
    id,
    type: "telegram",
    name: `bot ${id}`,
    agentId: "assistant",
    settings: {},
    userMode: "guest",
    enabled: false,
    createdBy: "owner",
    createdAt: 1,
    updatedAt: 1,
  };
}

describeBackends("connector state for approval tickets", (open) => {
  it("lists entries by literal key prefix and deletes them, per connector", async () => {
    const { connectors, mappings } = storeOf(await open());
    await connectors.save(record("c"), {});
    await connectors.save(record("d"), {});
    const state = mappings.stateOf("c");
    await state.set("approval:tok1", '{"a":1}');
    await state.set("approval:tok2", '{"a":2}');
    await state.set("approval-call:run1:call1", "tok1");
    await state.set("approvalXtok3", "not a ticket");
    await state.set("approval_%:odd", "literal");
    await state.set("telegram.offset", "5");
    await mappings.stateOf("d").set("approval:tok9", "{}");

    expect(await state.list("approval:")).toEqual([
      { key: "approval:tok1", value: '{"a":1}' },
      { key: "approval:tok2", value: '{"a":2}' },
    ]);
    expect(await state.list("approval-call:run1:")).toEqual([
      { key: "approval-call:run1:call1", value: "tok1" },
    ]);
    expect(await state.list("approval_%")).toEqual([{ key: "approval_%:odd", value: "literal" }]);

    await state.delete("approval:tok1");
    await state.delete("approval:missing");
    expect(await state.get("approval:tok1")).toBeUndefined();
    expect((await state.list("approval:")).map((e) => e.key)).toEqual(["approval:tok2"]);
    // Other connectors and other keys are untouched.
    expect(await mappings.stateOf("d").list("approval:")).toEqual([{ key: "approval:tok9", value: "{}" }]);
    expect(await state.get("telegram.offset")).toBe("5");
  });
});
