/** An agent's sandbox network column holds the same contract on SQLite and on PostgreSQL. */
import { expect, it } from "vitest";
import { migrations } from "../../src/store/migrations.js";
import { agentNetwork } from "../../src/store/postgres/migrations/019-agent-network.js";
import { createPostgresTeamStore, createSqliteTeamStore, type TeamStore } from "../../src/team/team-store.js";
import type { AgentRecord } from "../../src/team/types.js";
import { type Backend, describeBackends, rawSql } from "./backends.js";

function storeOf(backend: Backend): TeamStore {
  return backend.kind === "sqlite" ? createSqliteTeamStore(backend.db) : createPostgresTeamStore(backend.db);
}

function agent(id: string, extra: Partial<AgentRecord> = {}): AgentRecord {
  return {
    id,
    name: id,
    emoji: "",
    toolsDeny: [],
    memory: true,
    skills: [],
    askFirst: [],
    createdAt: 1000,
    updatedAt: 1000,
    ...extra,
  };
}

describeBackends("agent network", (open) => {
  it("keeps an agent's network through insert, update and reset, and reads NULL as the server's", async () => {
    const backend = await open();
    const store = storeOf(backend);
    await store.agents.insert(agent("coder", { network: { mode: "allow", hosts: ["registry.npmjs.org"] } }));
    await store.agents.insert(agent("writer"));
    expect((await store.agents.get("coder"))?.network).toEqual({
      mode: "allow",
      hosts: ["registry.npmjs.org"],
    });
    expect(await store.agents.get("writer")).not.toHaveProperty("network");
    await store.agents.update(agent("coder", { network: { mode: "on" }, updatedAt: 2000 }));
    expect((await store.agents.get("coder"))?.network).toEqual({ mode: "on" });
    await store.agents.update(agent("coder", { updatedAt: 3000 }));
    expect(await store.agents.get("coder")).not.toHaveProperty("network");
    const rows = await rawSql<{ network_json: string | null }>(
      backend,
      "SELECT network_json FROM team_agents WHERE id = ?",
      ["coder"],
    );
    expect(rows[0]?.network_json).toBeNull();
  });

  it("reads a damaged column as the server's setting", async () => {
    const backend = await open();
    const store = storeOf(backend);
    await store.agents.insert(agent("coder"));
    await rawSql(backend, "UPDATE team_agents SET network_json = ? WHERE id = ?", [
      '{"mode":"everything"}',
      "coder",
    ]);
    expect(await store.agents.get("coder")).not.toHaveProperty("network");
  });

  it("adds the column idempotently (the migration run again changes nothing)", async () => {
    const backend = await open();
    if (backend.kind === "sqlite") {
      const migration = migrations.find((m) => m.version === 24);
      expect(migration?.name).toMatch(/network/);
      migration?.up(backend.db);
    } else {
      await backend.db.transaction((tx) => agentNetwork.up(tx));
    }
    const store = storeOf(backend);
    await store.agents.insert(agent("coder", { network: { mode: "off" } }));
    expect((await store.agents.get("coder"))?.network).toEqual({ mode: "off" });
  });
});
