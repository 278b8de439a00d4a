/**
 * Where the team server keeps its state, chosen once at start: the SQLite file in DIMSUM_HOME (the
 * default, no other service), or a PostgreSQL database (`DIMSUM_DATABASE_URL`) that several instances
 * share. Every repository of every domain comes from here, so the server composition (serve.ts) never
 * knows which one it got. With PostgreSQL, `DIMSUM_REDIS_URL` adds the relay that carries live events
 * between the instances.
 */
import { hostname } from "node:os";
import { join } from "node:path";
import type { DimsumConfig } from "../../config/load-config.js";
import {
  type ConnectorStore,
  createPostgresConnectorStore,
  createSqliteConnectorStore,
} from "../../connectors/store/connector-store.js";
import { DimsumError } from "../../errors.js";
import { KnowledgeService, type KnowledgeServiceOptions } from "../../knowledge/index.js";
import { createPostgresKnowledgeService } from "../../knowledge/postgres.js";
import { createPostgresMemoryStore } from "../../memory/postgres-memory-store.js";
import { SqliteMemoryStore } from "../../memory/sqlite-memory-store.js";
import type { MemoryStoreOptions } from "../../memory/store-front.js";
import type { MemoryStore } from "../../memory/types.js";

import {
  createPostgresScheduleStore,
  createSqliteScheduleStore,
  type ScheduleStore,
} from "../../schedules/schedule-store.js";
import { AuditLog } from "../../store/audit/audit-log.js";
import { BudgetStore } from "../../store/budgets/budget-store.js";
import { type Database, openDatabase } from "../../store/database.js";
import { openPostgres, type PgDatabase, redactUrl } from "../../store/postgres/pg-database.js";
import { PgSessionStore } from "../../store/postgres/pg-session-store.js";
import { type MessageRelay, openRedisRelay } from "../../store/redis/redis-relay.js";
import { postgresDatabase, sqliteDatabase } from "../../store/sql-database.js";
import { SqliteSessionStore } from "../../store/sqlite-session-store.js";
import type { SessionStore } from "../../store/types.js";
import type { PersonaStore } from "../../team/personas.js";
import { type MeetingRepository, postgresMeetings, sqliteMeetings } from "../../team/store/meeting-repo.js";
import { PgPersonaStore } from "../../team/store/postgres/persona-store.js";
import type { TeamRelayMessage } from "../../team/team-relay.js";
import { createPostgresTeamStore, createSqliteTeamStore, type TeamStore } from "../../team/team-store.js";
import { type AccountsFactory, postgresAccounts, sqliteAccounts } from "../accounts.js";
import type { AuthEvent } from "../auth/auth-events.js";
import type { ServerRelayMessage } from "../instance-sync.js";
import { openSharedLimits, type SharedLimits } from "../security/shared-limits.js";
import { type McpCredentialRepository, SqliteMcpCredentials } from "../settings/mcp-credential-store.js";
import { createPostgresMcpCredentials, createPostgresSettingsStore } from "../settings/pg-settings-store.js";
import { openSecretBox, type SecretBox } from "../settings/secret-box.js";
import { type SettingsRepository, SettingsStore } from "../settings/settings-store.js";
import { openRedisCooldowns, type RedisCooldowns } from "./redis-cooldowns.js";

export interface ServerStorage {
  readonly kind: "sqlite" | "postgres";
  /** The file or the database URL (without its password), for messages. */
  readonly label: string;
  /** The SQLite file, when that is the backend (its group commit and WAL checkpoints run on it). */
  readonly sqlite: Database | undefined;
  /** Seals stored secrets (provider keys, connector tokens, MCP env and sign-ins). */
  readonly box: SecretBox;
  readonly accounts: AccountsFactory;
  readonly settings: SettingsRepository;
  readonly mcpCredentials: McpCredentialRepository;
  readonly team: TeamStore;
  /** The groups' meetings. */
  readonly meetings: MeetingRepository;
  readonly sessions: SessionStore;
  /** Agents' personas; undefined: SOUL.md files under DIMSUM_HOME (one instance). */
  readonly personas: PersonaStore | undefined;
  readonly schedules: ScheduleStore;
  readonly connectors: ConnectorStore;
  /** The audit log (server/audit). */
  readonly audit: AuditLog;
  /** The budgets runs are held to. */
  readonly budgets: BudgetStore;
  memory(options: MemoryStoreOptions): MemoryStore;
  knowledge(options: KnowledgeServiceOptions): KnowledgeService;
  /** Resolves when the database answers a trivial query (the readiness probe, routes/health.ts). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The live links between the instances on one PostgreSQL database (Redis pub/sub). */
export interface Cluster {
  team: MessageRelay<TeamRelayMessage>;
  auth: MessageRelay<AuthEvent>;
  /** MCP servers, sign-ins and connectors changed on one instance (see instance-sync.ts). */
  server: MessageRelay<ServerRelayMessage>;
  /** The rate limits of every instance (security/shared-limits.ts). */
  limits: SharedLimits;
  /** Model chains' provider cooldowns, seen by every instance (redis-cooldowns.ts). */
  cooldowns: RedisCooldowns;
  close(): Promise<void>;
}

function sqliteStorage(db: Database, box: SecretBox, label: string): ServerStorage {
  return {
    kind: "sqlite",
    label,
    sqlite: db,
    box,
    accounts: sqliteAccounts(db),
    settings: new SettingsStore(db, box),
    mcpCredentials: new SqliteMcpCredentials(db),
    team: createSqliteTeamStore(db),
    meetings: sqliteMeetings(db),
    sessions: new SqliteSessionStore(db),
    personas: undefined,
    schedules: createSqliteScheduleStore(db),
    connectors: createSqliteConnectorStore(db, box),
    audit: new AuditLog(sqliteDatabase(db), { instance: hostname() }),
    budgets: new BudgetStore(sqliteDatabase(db)),
    memory: (options) => new SqliteMemoryStore(db, options),
    knowledge: (options) => KnowledgeService.sqlite(db, options),
    async ping() {
      db.prepare("SELECT 1").get();
    },
    async close() {
      db.close();
    },
  };
}

function postgresStorage(db: PgDatabase, box: SecretBox): ServerStorage {
  return {
    kind: "postgres",
    label: db.label,
    sqlite: undefined,
    box,
    accounts: postgresAccounts(db),
    settings: createPostgresSettingsStore(db, box),
    mcpCredentials: createPostgresMcpCredentials(db),
    team: createPostgresTeamStore(db),
    meetings: postgresMeetings(db),
    sessions: new PgSessionStore(db),
    personas: new PgPersonaStore(db),
    schedules: createPostgresScheduleStore(db),
    connectors: createPostgresConnectorStore(db, box),
    audit: new AuditLog(postgresDatabase(db), { instance: hostname() }),
    budgets: new BudgetStore(postgresDatabase(db)),
    memory: (options) => createPostgresMemoryStore(db, options),
    knowledge: (options) => createPostgresKnowledgeService(db, options),
    async ping() {
      await db.one("SELECT 1 AS ok");
    },
    close: () => db.close(),
  };
}

/** Opens (and migrates) the configured backend. Throws a `config` DimsumError naming what to fix. */
export async function openStorage(config: DimsumConfig): Promise<ServerStorage> {
  const box = openSecretBox(config.home, { key: config.server.secretKey });
  const url = config.server.databaseUrl;
  if (url === undefined) {
    const file = join(config.home, "dimsum.db");
    return sqliteStorage(openDatabase(file), box, file);
  }
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new DimsumError("config", `DIMSUM_DATABASE_URL must be a postgres:// URL (got ${redactUrl(url)})`, {
      hint: "e.g. postgres://dimsum@db.internal:5432/dimsum, or unset it to use the SQLite file",
    });
  }
  if (config.server.secretKey === undefined) {
    throw new DimsumError(
      "config",
      "several instances on one database need one key for the secrets they store",
      {
        hint: `set DIMSUM_SECRET_KEY on every instance (\`openssl rand -base64 32\`; after \`dimsum migrate\`, the content of ${join(config.home, "secret.key")})`,
      },
    );
  }
  return postgresStorage(await openPostgres(url), box);
}

/** The relays of the configured Redis, when there is one; refused without a shared database. */
export async function openCluster(
  config: DimsumConfig,
  storage: ServerStorage,
): Promise<Cluster | undefined> {
  const url = config.server.redisUrl;
  if (url === undefined) return undefined;
  if (storage.kind !== "postgres") {
    throw new DimsumError("config", "DIMSUM_REDIS_URL links instances that share a PostgreSQL database", {
      hint: "set DIMSUM_DATABASE_URL too (see `dimsum migrate`), or unset DIMSUM_REDIS_URL",
    });
  }
  const opened: Array<MessageRelay<unknown>> = [];
  const open = async <T>(channel: string): Promise<MessageRelay<T>> => {
    const relay = await openRedisRelay<T>(url, { channel }).catch(async (err: unknown) => {
      await Promise.allSettled(opened.map((r) => r.close()));
      throw err;
    });
    opened.push(relay as MessageRelay<unknown>);
    return relay;
  };
  const team = await open<TeamRelayMessage>("dimsum:team");
  const auth = await open<AuthEvent>("dimsum:auth");
  const server = await open<ServerRelayMessage>("dimsum:server");
  const limits = await openSharedLimits(url).catch(async (err: unknown) => {
    await Promise.allSettled(opened.map((r) => r.close()));
    throw err;
  });
  const cooldowns = await openRedisCooldowns(url).catch(async (err: unknown) => {
    await Promise.allSettled([...opened.map((r) => r.close()), limits.close()]);
    throw err;
  });
  return {
    team,
    auth,
    server,
    limits,
    cooldowns,
    async close() {
      await Promise.allSettled([...opened.map((r) => r.close()), limits.close(), cooldowns.close()]);
    },
  };
}
