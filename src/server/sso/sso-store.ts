/**
 * Single sign-on settings and links, in `server_settings` on either database: the OpenID Connect
 * providers the owner configured (client secrets sealed like provider keys), whether people other
 * than the owner may still sign in with a password, which provider identity is which account, and
 * the sign-in attempts already used (so a callback cannot be replayed, even on another instance).
 */

import { one, run, type SqlDatabase, sql } from "../../store/sql-database.js";
import type { Role } from "../auth/user-store.js";
import type { SecretBox } from "../settings/secret-box.js";

/** Who may get an account on first sign-in. */
export type SsoNewAccounts = "create" | "invited";

/** A provider as the owner enters it (the secret in clear, once). */
export interface SsoProviderInput {
  /** Short id used in URLs (`/api/auth/sso/<id>/start`): lowercase letters, digits and dashes. */
  id: string;
  /** What the sign-in button says after "Sign in with". */
  name: string;
  /** The issuer URL; its `/.well-known/openid-configuration` is read. */
  issuer: string;
  clientId: string;
  /** Left out on an update: the stored secret is kept. */
  clientSecret?: string;
  /** Emails whose domain is in the list may sign in; empty: any verified email. */
  allowedDomains: string[];
  /** The ID token claim holding groups or roles (`groups`, `roles`); empty: everyone is a member. */
  roleClaim: string;
  /** A claim value → the role it gives (`"dimsum-admins": "admin"`); the first match in role order wins. */
  roleMap: Record<string, Exclude<Role, "owner">>;
  /** `create`: an account is made on first sign-in; `invited`: only accounts that exist (by email). */
  newAccounts: SsoNewAccounts;
}

/** A provider as stored: the secret sealed. */
export interface StoredSsoProvider extends Omit<SsoProviderInput, "clientSecret"> {
  sealedSecret: string;
}

/** What admins see of a provider: never the secret. */
export type SsoProviderView = Omit<StoredSsoProvider, "sealedSecret"> & { hasSecret: boolean };

/** A provider with its secret opened, for the sign-in itself. */
export type SsoProvider = Omit<StoredSsoProvider, "sealedSecret"> & { clientSecret: string };

interface StoredSso {
  providers: StoredSsoProvider[];
  /** False: only the owner signs in with a password; everyone else through a provider. */
  passwordSignIn: boolean;
}

const KEY = "sso";
const EMPTY: StoredSso = { providers: [], passwordSignIn: true };

/** The `server_settings` key linking one provider identity (`sub`) to an account. */
function identityKey(providerId: string, subject: string): string {
  return `ssoIdentity:${providerId}:${subject}`;
}

/** The settings in a `server_settings` row (the defaults where it is missing or lacks a field). */
function storedOf(row: { value_json: string } | undefined): StoredSso {
  return row ? { ...EMPTY, ...(JSON.parse(row.value_json) as Partial<StoredSso>) } : EMPTY;
}

const SQL = {
  get: sql("SELECT value_json FROM server_settings WHERE key = ?"),
  getForUpdate: sql({
    sqlite: "SELECT value_json FROM server_settings WHERE key = ?",
    postgres: "SELECT value_json FROM server_settings WHERE key = ? FOR UPDATE",
  }),
  put: sql(`INSERT INTO server_settings (key, value_json, updated_at) VALUES (?, ?, ?)
      ON CONFLICT (key) DO UPDATE SET value_json = excluded.value_json, updated_at = excluded.updated_at`),
  // A second insert of the same key changes nothing (a replayed sign-in).
  insertOnce: sql(
    "INSERT INTO server_settings (key, value_json, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING",
  ),
  dropUsedBefore: sql({
    sqlite: "DELETE FROM server_settings WHERE key LIKE 'ssoUsed:%' AND updated_at < ?",
    postgres: "DELETE FROM server_settings WHERE starts_with(key, 'ssoUsed:') AND updated_at < ?",
  }),
  delete: sql("DELETE FROM server_settings WHERE key = ?"),
} as const;

const SAVE = "save the sign-in settings in";
const READ = "read the sign-in settings from";

/** The sign-in settings and links, one logic over either database. */
export class SsoStore {
  constructor(private readonly db: SqlDatabase) {}

  async #stored(): Promise<StoredSso> {
    return storedOf(await this.db.one<{ value_json: string }>(READ, SQL.get, [KEY]));
  }

  async #change(update: (stored: StoredSso) => StoredSso | undefined): Promise<boolean> {
    return this.db.transaction(SAVE, function* () {
      const row = yield* one<{ value_json: string }>(SQL.getForUpdate, [KEY]);
      const next = update(storedOf(row));
      if (!next) return false;
      yield* run(SQL.put, [KEY, JSON.stringify(next), Date.now()]);
      return true;
    });
  }

  /** Whether people other than the owner may sign in with a password. */
  async passwordSignIn(): Promise<boolean> {
    return (await this.#stored()).passwordSignIn;
  }

  async setPasswordSignIn(allowed: boolean): Promise<void> {
    await this.#change((s) => ({ ...s, passwordSignIn: allowed }));
  }

  /** The providers as admins see them. */
  async views(): Promise<SsoProviderView[]> {
    return (await this.#stored()).providers.map(({ sealedSecret, ...rest }) => ({
      ...rest,
      hasSecret: sealedSecret !== "",
    }));
  }

  /** One provider with its secret opened; undefined when unknown (or its secret cannot be opened). */
  async provider(id: string, box: SecretBox): Promise<SsoProvider | undefined> {
    const found = (await this.#stored()).providers.find((p) => p.id === id);
    if (!found) return undefined;
    const { sealedSecret, ...rest } = found;
    const clientSecret = sealedSecret === "" ? "" : box.open(sealedSecret);
    return clientSecret === undefined ? undefined : { ...rest, clientSecret };
  }

  /** Adds or replaces a provider; a replaced one keeps its secret unless a new one is given. */
  async save(input: SsoProviderInput, box: SecretBox): Promise<void> {
    const { clientSecret, ...rest } = input;
    await this.#change((s) => {
      const previous = s.providers.find((p) => p.id === input.id);
      const sealedSecret =
        clientSecret !== undefined
          ? clientSecret === ""
            ? ""
            : box.seal(clientSecret)
          : (previous?.sealedSecret ?? "");
      const stored: StoredSsoProvider = { ...rest, sealedSecret };
      const providers = previous
        ? s.providers.map((p) => (p.id === input.id ? stored : p))
        : [...s.providers, stored];
      return { ...s, providers };
    });
  }

  /** Forgets a provider (accounts it made stay; their links to it go when they sign in no more). */
  async remove(id: string): Promise<boolean> {
    return this.#change((s) =>
      s.providers.some((p) => p.id === id)
        ? { ...s, providers: s.providers.filter((p) => p.id !== id) }
        : undefined,
    );
  }

  /** The account a provider identity signed in as before. */
  async linkedAccount(providerId: string, subject: string): Promise<string | undefined> {
    const row = await this.db.one<{ value_json: string }>(READ, SQL.get, [identityKey(providerId, subject)]);
    return row ? (JSON.parse(row.value_json) as string) : undefined;
  }

  async link(providerId: string, subject: string, userId: string): Promise<void> {
    await this.db.run(SAVE, SQL.put, [identityKey(providerId, subject), JSON.stringify(userId), Date.now()]);
  }

  async unlink(providerId: string, subject: string): Promise<void> {
    await this.db.run(SAVE, SQL.delete, [identityKey(providerId, subject)]);
  }

  /**
   * Marks a sign-in attempt (its `state`) used; false when it was used already (a replayed callback).
   * Marks older than `keepMs` are dropped on the way.
   */
  async useOnce(state: string, keepMs = 24 * 3_600_000): Promise<boolean> {
    const now = Date.now();
    await this.db.run(SAVE, SQL.dropUsedBefore, [now - keepMs]);
    return (await this.db.run(SAVE, SQL.insertOnce, [`ssoUsed:${state}`, "true", now])) === 1;
  }
}
