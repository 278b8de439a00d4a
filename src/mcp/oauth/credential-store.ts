/**
 * Where a person's OAuth state for one MCP server lives: the registered client, the tokens, the
 * PKCE verifier of a login in progress and the discovered metadata. The MCP layer only sees this
 * interface; the CLI keeps it encrypted under DIMSUM_HOME, the team server per person in its database.
 */
import type {
  OAuthClientInformationMixed,
  OAuthDiscoveryState,
  OAuthTokens,
} from "@modelcontextprotocol/client";

export interface StoredOAuthState {
  /** The server URL these credentials are for; a record for another URL is ignored. */
  url: string;
  clientInformation?: OAuthClientInformationMixed;
  tokens?: OAuthTokens;
  /** When the access token expires (ms since epoch), from `expires_in` at save time. */
  expiresAt?: number;
  codeVerifier?: string;
  /** The redirect URI registered for this client (loopback or the server's callback). */
  redirectUrl?: string;
  discovery?: OAuthDiscoveryState;
  /** Scope the server asked for in an `insufficient_scope` challenge; the next login requests it. */
  stepUpScope?: string;
}

export interface CredentialStore {
  load(server: string): Promise<StoredOAuthState | undefined>;
  save(server: string, state: StoredOAuthState): Promise<void>;
  /** Forgets everything about `server` (logout). */
  delete(server: string): Promise<void>;
}

/** A store that lives as long as the process (conformance runs, tests). */
export function memoryCredentialStore(): CredentialStore {
  const records = new Map<string, StoredOAuthState>();
  return {
    async load(server) {
      const record = records.get(server);
      return record ? structuredClone(record) : undefined;
    },
    async save(server, state) {
      records.set(server, structuredClone(state));
    },
    async delete(server) {
      records.delete(server);
    },
  };
}

/** A store kept as one sealed text per server (the CLI's files, the server's rows). */
export interface SealedStorage {
  read(server: string): Promise<string | undefined>;
  write(server: string, sealed: string): Promise<void>;
  remove(server: string): Promise<void>;
}

/** Encrypts each record with `seal` / `open` (the secret box) before it reaches `storage`. */
export function sealedCredentialStore(
  storage: SealedStorage,
  box: { seal(plain: string): string; open(sealed: string): string | undefined },
): CredentialStore {
  return {
    async load(server) {
      const sealed = await storage.read(server);
      if (sealed === undefined) return undefined;
      const plain = box.open(sealed);
      if (plain === undefined) return undefined;
      try {
        return JSON.parse(plain) as StoredOAuthState;
      } catch {
        return undefined;
      }
    },
    async save(server, state) {
      await storage.write(server, box.seal(JSON.stringify(state)));
    },
    async delete(server) {
      await storage.remove(server);
    },
  };
}
