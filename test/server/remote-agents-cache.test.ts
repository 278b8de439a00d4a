/**
 * The remote agents' list runs read is kept in memory: read from the database once, not at every run
 * start, and read again after a change, made on this instance or told by another one through the
 * instance sync (real Redis pub/sub, two instances over one database).
 */
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { RemoteAgentConfig } from "../../src/a2a/remote-config.js";
import { joinInstanceSync, type ServerRelayMessage } from "../../src/server/instance-sync.js";
import { RemoteAgents } from "../../src/server/remote-agents.js";
import {
  RemoteAgentSettings,
  type RemoteAgentSettingsRepository,
} from "../../src/server/settings/remote-agent-settings.js";
import { openSecretBox } from "../../src/server/settings/secret-box.js";
import { openDatabase } from "../../src/store/database.js";
import { openRedisRelay } from "../../src/store/redis/redis-relay.js";
import { sqliteDatabase } from "../../src/store/sql-database.js";
import { REDIS_URL, redisAvailable } from "../support/redis.js";
import { tempDir } from "./helpers.js";

/** The saved agents of the database, counting the reads runs make. */
function counted(repo: RemoteAgentSettingsRepository): {
  repo: RemoteAgentSettingsRepository;
  reads: () => number;
} {
  let reads = 0;
  return {
    repo: {
      list: () => repo.list(),
      configs: () => {
        reads++;
        return repo.configs();
      },
      add: (input) => repo.add(input),
      remove: (name) => repo.remove(name),
      update: (name, patch) => repo.update(name, patch),
    },
    reads: () => reads,
  };
}

/** What the instance's runs read, once `ok` (the other instance's change was heard). */
async function until(
  remotes: RemoteAgents,
  ok: (list: readonly RemoteAgentConfig[]) => boolean,
): Promise<RemoteAgentConfig[]> {
  for (let i = 0; i < 200; i++) {
    const list = await remotes.forRuns();
    if (ok(list)) return list;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("the other instance's change was not heard");
}

const names = (list: readonly RemoteAgentConfig[]) => list.map((r) => r.name);

function openRepo(home: string): RemoteAgentSettings {
  return new RemoteAgentSettings(sqliteDatabase(openDatabase(join(home, "dimsum.db"))), openSecretBox(home));
}

it("reads the list once for many runs, and again after a change made here", async () => {
  const home = tempDir("dimsum-remote-cache-");
  const { repo, reads } = counted(openRepo(home));
  const remotes = new RemoteAgents([], repo);
  for (let i = 0; i < 5; i++) expect(await remotes.forRuns()).toEqual([]);
  expect(reads()).toBe(1);
  await remotes.add({ name: "helper", url: "http://127.0.0.1:9/" });
  expect(names(await remotes.forRuns())).toEqual(["helper"]);
  await remotes.update("helper", { enabled: false });
  expect(await remotes.forRuns()).toEqual([]);
  await remotes.update("helper", { enabled: true });
  expect(names(await remotes.forRuns())).toEqual(["helper"]);
  await remotes.remove("helper");
  expect(await remotes.forRuns()).toEqual([]);
  expect(reads()).toBe(5);
});

describe.skipIf(!redisAvailable)("with two instances", () => {
  const closing: Array<() => Promise<void> | void> = [];
  afterAll(async () => {
    for (const close of closing.reverse()) await close();
  });

  it("drops the list another instance changed, through the instance sync", async () => {
    const home = tempDir("dimsum-remote-cache-sync-");
    const channel = `dimsum:test-remote-agents:${Date.now()}`;
    const instance = async () => {
      const relay = await openRedisRelay<ServerRelayMessage>(REDIS_URL, { channel });
      const remotes = new RemoteAgents([], openRepo(home));
      const sync = joinInstanceSync({ relay, remoteAgents: remotes, onError: (err) => console.error(err) });
      closing.push(
        () => relay.close(),
        () => sync.leave(),
      );
      return remotes;
    };
    const a = await instance();
    const b = await instance();
    expect(await b.forRuns()).toEqual([]);
    await a.add({ name: "helper", url: "http://127.0.0.1:9/" });
    expect(names(await until(b, (list) => list.length > 0))).toEqual(["helper"]);
    await a.remove("helper");
    expect(await until(b, (list) => list.length === 0)).toEqual([]);
  });
});
