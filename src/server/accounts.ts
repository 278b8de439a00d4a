/**
 * The server's account repositories (users, login sessions, API tokens) made together, because they
 * share the auth events the WebSocket hub listens to. The server takes a factory, so the composition
 * root picks the backend: `sqliteAccounts(db)` (the default) or `postgresAccounts(db)`.
 */
import type { Database } from "../store/database.js";
import type { PgDatabase } from "../store/postgres/pg-database.js";
import { postgresDatabase, type SqlDatabase, sqliteDatabase } from "../store/sql-database.js";
import { type ApiTokenRepository, ApiTokens } from "./auth/api-token-store.js";
import type { AuthEvents } from "./auth/auth-events.js";
import type { ScryptParams } from "./auth/passwords.js";
import { type LoginSessionRepository, LoginSessions } from "./auth/session-store.js";
import { type UserRepository, Users } from "./auth/user-store.js";
import { SsoStore } from "./sso/sso-store.js";

export interface AccountStores {
  users: UserRepository;
  sessions: LoginSessionRepository;
  apiTokens: ApiTokenRepository;
  /** Single sign-on providers and the identities linked to accounts. */
  sso: SsoStore;
}

export interface AccountStoreOptions {
  /** Hears role changes, ended sessions and deleted accounts. */
  events?: AuthEvents;
  /** scrypt cost of new password hashes. */
  hashParams?: ScryptParams;
  /** Idle window of login sessions. */
  sessionTtlMs?: number;
}

/** Makes the three repositories over one database. */
export type AccountsFactory = (options: AccountStoreOptions) => AccountStores;

function parts(options: AccountStoreOptions) {
  return {
    users: {
      ...(options.events ? { events: options.events } : {}),
      ...(options.hashParams ? { hashParams: options.hashParams } : {}),
    },
    sessions: {
      ...(options.events ? { events: options.events } : {}),
      ...(options.sessionTtlMs ? { ttlMs: options.sessionTtlMs } : {}),
    },
  };
}

/** The account stores over one database, whichever backend it is. */
function accountsOn(db: SqlDatabase): AccountsFactory {
  return (options) => {
    const o = parts(options);
    return {
      users: new Users(db, o.users),
      sessions: new LoginSessions(db, o.sessions),
      apiTokens: new ApiTokens(db),
      sso: new SsoStore(db),
    };
  };
}

/** The accounts in the SQLite file. */
export function sqliteAccounts(db: Database): AccountsFactory {
  return accountsOn(sqliteDatabase(db));
}

/** The accounts in PostgreSQL, shared by every instance on that database. */
export function postgresAccounts(db: PgDatabase): AccountsFactory {
  return accountsOn(postgresDatabase(db));
}
