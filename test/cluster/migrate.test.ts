/**
 * `dimsum migrate --to postgres://…` copies a SQLite home into PostgreSQL: every row, the search
 * vectors, the personas of SOUL.md files, with sequences continuing after the copied ids; a second
 * run changes nothing; a server that cannot be reached is a config error naming the fix.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { KnowledgeService } from "../../src/knowledge/index.js";
import { createPostgresKnowledgeService } from "../../src/knowledge/postgres.js";
import { fileCredentialStore, hashedName } from "../../src/mcp/oauth/file-store.js";
import { createPostgresMemoryStore } from "../../src/memory/postgres-memory-store.js";
import { SqliteMemoryStore } from "../../src/memory/sqlite-memory-store.js";
import {
  SessionStore as LoginSessions,
  PgSessionStore as PgLoginSessions,
} from "../../src/server/auth/session-store.js";
import { PgUserStore, UserStore } from "../../src/server/auth/user-store.js";
import { personalMcpCredentials } from "../../src/server/mcp-credentials.js";
import { legacySignInFolder } from "../../src/server/settings/mcp-credential-store.js";
import { PgMcpCredentials, PgSettingsStore } from "../../src/server/settings/pg-settings-store.js";
import { openSecretBox } from "../../src/server/settings/secret-box.js";
import { SettingsStore } from "../../src/server/settings/settings-store.js";
import { openDatabase } from "../../src/store/database.js";
import { openPostgres, type PgDatabase } from "../../src/store/postgres/pg-database.js";
import { PgSessionStore } from "../../src/store/postgres/pg-session-store.js";
import { SqliteSessionStore } from "../../src/store/sqlite-session-store.js";
import { PgPersonaStore } from "../../src/team/store/postgres/persona-store.js";
import { createTeam } from "../../src/team/team.js";
import { createPostgresTeamStore, createSqliteTeamStore } from "../../src/team/team-store.js";
import type { Actor, TeamEvent } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { cleanEnv, runCli } from "../support/cli.js";
import { createTestDatabase, postgresAvailable } from "../support/postgres.js";

const owner: Actor = { userId: "olivia", role: "owner" };

describe.skipIf(!postgresAvailable)("dimsum migrate --to postgres", () => {
  let server: FakeLlmServer;
  let home: string;
  let target: { url: string; drop(): Promise<void> };
  let channelId = "";
  let loginToken = "";
  const signIn = {
    url: "https://mcp.example/mcp",
    tokens: { access_token: "at-from-file", token_type: "Bearer" },
  };

  beforeAll(async () => {
    server = await startFakeLlmServer({ defaultTurn: () => ({ text: "noted, 数据库 backed up" }) });
    home = mkdtempSync(join(tmpdir(), "dimsum-migrate-"));
    const config = loadConfig({
      cwd: home,
      env: {
        DIMSUM_HOME: home,
        DIMSUM_MODEL: "openai:gpt-test",
        OPENAI_API_KEY: "sk-test",
        OPENAI_BASE_URL: `${server.url}/v1`,
      },
    });
    const db = openDatabase(join(home, "dimsum.db"));
    const team = createTeam({ db, home, config, streamOptions: { retry: { maxRetries: 0 } } });
    const done = new Promise<void>((resolve) => {
      const off = team.subscribe(owner, (e: TeamEvent) => {
        if (e.type === "message" && e.message.author.type === "agent") {
          off();
          resolve();
        }
      });
    });
    const room = await team.createChannel(owner, {
      kind: "group",
      name: "ops",
      agentIds: ["writer"],
      userIds: [],
    });
    channelId = room.id;
    await team.postMessage(owner, room.id, "the nightly backup of the 数据库 failed");
    await team.postMessage(owner, room.id, "@writer please note it");
    await done;
    await team.putSoul(owner, "writer", "You write release notes. Migrated persona.");
    await team.close();
    const memories = new SqliteMemoryStore(db);
    await memories.remember({
      userId: "olivia",
      text: "Olivia prefers oolong tea in the afternoon",
      type: "semantic",
    });
    await memories.remember({ userId: "olivia", text: "奥利维亚住在上海", type: "semantic" });
    await memories.coreAppend({ userId: "olivia" }, "human", "Olivia runs the ops team.");
    await KnowledgeService.sqlite(db).ingest("handbook", [
      {
        kind: "bytes",
        name: "deploys.md",
        data: "# Deploys\n\nProduction deploys happen on Tuesdays after the freeze.",
      },
    ]);
    // The accounts: a user with a login, a provider key sealed with the home's key, and an MCP
    // sign-in an older version kept as a file.
    const box = openSecretBox(home);
    const ann = await new UserStore(db, { hashParams: { N: 1024, r: 8, p: 1 } }).create({
      username: "ann",
      password: "ann-password-1",
      role: "admin",
    });
    loginToken = (await new LoginSessions(db).create(ann.id)).token;
    await new SettingsStore(db, box).saveProvider({ name: "openai", apiKey: "sk-migrated-0123456789" });
    await fileCredentialStore(join(legacySignInFolder(home), hashedName(ann.id)), () => box).save(
      "notes",
      signIn,
    );
    db.close();
    target = await createTestDatabase();
  });

  afterAll(async () => {
    await target?.drop();
    await server?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it("copies every row, rebuilds search and personas, and a second run changes nothing", async () => {
    const env = cleanEnv({ DIMSUM_HOME: home });
    const first = await runCli(["migrate", "--to", target.url, "--json"], { env, timeoutMs: 60_000 });
    expect(first.stderr).toContain("team_messages");
    expect(first.code).toBe(0);
    const report = JSON.parse(first.stdout) as {
      tables: Array<{ table: string; source: number; target: number }>;
    };
    const count = (table: string) => report.tables.find((t) => t.table === table)?.target;
    expect(count("team_messages")).toBe(3);
    expect(count("team_agents")).toBeGreaterThan(0);
    expect(count("messages")).toBeGreaterThan(0);
    expect(count("run_events")).toBeGreaterThan(0);
    expect(report.tables.every((t) => t.source === t.target)).toBe(true);

    const second = await runCli(["migrate", "--to", target.url, "--json"], { env, timeoutMs: 60_000 });
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toEqual(report);

    const sqlite = openDatabase(join(home, "dimsum.db"));
    const pg: PgDatabase = await openPostgres(target.url);
    try {
      const fromSqlite = createSqliteTeamStore(sqlite);
      const fromPg = createPostgresTeamStore(pg);
      expect(await fromPg.messages.list(channelId, { limit: 50 })).toEqual(
        await fromSqlite.messages.list(channelId, { limit: 50 }),
      );
      expect(await fromPg.channels.list()).toEqual(await fromSqlite.channels.list());
      expect(await fromPg.agents.list()).toEqual(await fromSqlite.agents.list());
      const hits = await fromPg.messages.search("数据库", {}, 10);
      expect(hits.map((m) => m.text).sort()).toEqual([
        "noted, 数据库 backed up",
        "the nightly backup of the 数据库 failed",
      ]);
      expect((await fromPg.messages.search("nightly", { channelId }, 10)).map((m) => m.text)).toEqual([
        "the nightly backup of the 数据库 failed",
      ]);
      expect((await new PgPersonaStore(pg).read("writer")).content).toBe(
        "You write release notes. Migrated persona.",
      );
      // The agents' sessions came along with their traces.
      const sessions = new SqliteSessionStore(sqlite);
      const pgSessions = new PgSessionStore(pg);
      const run = (await fromSqlite.messages.list(channelId, { limit: 50 })).find((m) => m.runId)
        ?.runId as string;
      const ref = (await fromSqlite.runs.get(run))!.ref;
      expect(await pgSessions.loadMessages(ref)).toEqual(await sessions.loadMessages(ref));
      // Memory and knowledge search work on the copy.
      const pgMemory = createPostgresMemoryStore(pg);
      const tea = await pgMemory.search({ userId: "olivia", query: "oolong tea" });
      expect(tea.hits.map((h) => h.memory.text)).toContain("Olivia prefers oolong tea in the afternoon");
      const shanghai = await pgMemory.search({ userId: "olivia", query: "上海" });
      expect(shanghai.hits[0]?.memory.text).toBe("奥利维亚住在上海");
      expect(await pgMemory.count("olivia")).toBe(2);
      expect((await pgMemory.allCoreBlocks("olivia")).map((b) => b.value)).toEqual([
        "Olivia runs the ops team.",
      ]);
      const kb = await createPostgresKnowledgeService(pg).search({
        query: "when are production deploys",
        kb: "handbook",
      });
      expect(kb.passages[0]?.text).toContain("Tuesdays");
      // The accounts came along: the login works, the key and the file's MCP sign-in open.
      const ann = await new PgUserStore(pg).verifyLogin("ANN", "ann-password-1");
      expect(ann?.role).toBe("admin");
      expect((await new PgLoginSessions(pg).authenticate(loginToken))?.user.id).toBe(ann?.id);
      const box = openSecretBox(home);
      expect(await new PgSettingsStore(pg, box).getProviderKey("openai")).toBe("sk-migrated-0123456789");
      const signIns = personalMcpCredentials(new PgMcpCredentials(pg), () => box);
      expect(await signIns(ann?.id ?? "").load("notes")).toEqual(signIn);
      // New rows continue after the copied ids.
      const next = await fromPg.messages.insert({
        channelId,
        author: { type: "user", id: "olivia" },
        text: "after the move",
        mentions: [],
        createdAt: Date.now(),
      });
      expect(next.id).toBeGreaterThan(3);
    } finally {
      sqlite.close();
      await pg.close();
    }
  });

  it("says how to fix an unreachable server, and what to pass", async () => {
    const env = cleanEnv({ DIMSUM_HOME: home });
    const down = await runCli(["migrate", "--to", "postgres://postgres:secret@127.0.0.1:1/dimsum"], { env });
    expect(down.code).toBe(3);
    expect(down.stderr).toMatch(/unreachable/);
    expect(down.stderr).toMatch(/DIMSUM_DATABASE_URL/);
    expect(down.stderr).not.toContain("secret");
    const none = await runCli(["migrate"], { env });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("--to postgres://");
  });
});
