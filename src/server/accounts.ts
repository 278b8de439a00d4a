/**
 * The server's account repositories (users, login sessions, API tokens) made together, because they
 * share the auth events the WebSocket hub listens to. The server takes a factory, so the composition
 * root picks the backend: `sqliteAccounts(db)` (the default) or `postgresAccounts(db)`.
 */
import type { Database } from "../store/database.js";
import type { PgDatabase } from "../store/postgres/pg-database.js";
import { postgresDatabase, sqliteDatabase } from "../store/sql-database.js";
import { type ApiTokenRepository, ApiTokenStore, PgApiTokenStore } from "./auth/api-token-store.js";
import type { AuthEvents } from "./auth/auth-events.js";
import type { ScryptParams } from "./auth/passwords.js";
import { type LoginSessionRepository, PgSessionStore, SessionStore } from "./auth/session-store.js";
import { PgUserStore, type UserRepository, UserStore } from "./auth/user-store.js";
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

/** The accounts in the SQLite file. */
export function sqliteAccounts(db: Database): AccountsFactory {
  return (options) => {
    const o = parts(options);
    return {
      users: new UserStore(db, o.users),
      sessions: new SessionStore(db, o.sessions),
      apiTokens: new ApiTokenStore(db),
      sso: new SsoStore(sqliteDatabase(db)),
    };
  };
}

/** The accounts in PostgreSQL, shared by every instance on that database. */
export function postgresAccounts(db: PgDatabase): AccountsFactory {
  return (options) => {
    const o = parts(options);
    return {
      users: new PgUserStore(db, o.users),
      sessions: new PgSessionStore(db, o.sessions),
      apiTokens: new PgApiTokenStore(db),
      sso: new SsoStore(postgresDatabase(db)),
    };
  };
}
