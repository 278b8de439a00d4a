/**
 * Dimsum's OAuth client for one MCP server and one person, on top of the SDK's `auth()` (which does
 * discovery with its fallbacks, dynamic client registration or client ID metadata documents, PKCE,
 * the resource parameter, scope selection, refresh and the token endpoint auth methods). This class
 * only keeps the state in a CredentialStore and decides what to ask for:
 *   - `offline_access` when the authorization server lists it (so a refresh token comes back);
 *   - the scope of an `insufficient_scope` challenge (step-up), remembered for the next login;
 *   - in a headless run, no registration and no browser: the run reports that a login is needed.
 */
import { randomBytes } from "node:crypto";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  OAuthTokens,
} from "@modelcontextprotocol/client";
import { DimsumError } from "../../errors.js";
import type { McpOAuthAuthorizationCode } from "../config.js";
import type { CredentialStore, StoredOAuthState } from "./credential-store.js";

/** Shows an authorization URL to the person (or follows it) and brings back the code. */
export interface OAuthAuthorizer {
  /** The redirect URI for `server` (a loopback listener, or the team server's callback). */
  redirectUrl(server: string): string;
  /**
   * Resolves to the redirect that carries `state`: its whole query (the code and the issuer, `iss`,
   * which the client checks against the authorization server, RFC 9207), or the code alone;
   * rejects on error or abort.
   */
  authorize(server: string, url: URL, state: string, signal?: AbortSignal): Promise<string | URLSearchParams>;
}

export interface PendingAuthorization {
  url: URL;
  state: string;
}

export interface DimsumOAuthProviderOptions {
  server: string;
  url: string;
  config: McpOAuthAuthorizationCode;
  store: CredentialStore;
  /** Absent in headless runs: a needed login is reported, never started. */
  authorizer?: OAuthAuthorizer;
  clientName?: string;
  /** What the person should do to sign in (default: run `dimsum mcp login <server>`). */
  signInHint?: string;
}

const OFFLINE_ACCESS = "offline_access";
/** Stands in for the redirect URI in headless runs, which never register or redirect. */
const HEADLESS_REDIRECT = "http://127.0.0.1/dimsum-oauth-callback";

export class DimsumOAuthProvider implements OAuthClientProvider {
  readonly #options: DimsumOAuthProviderOptions;
  #state: StoredOAuthState;
  #pending: PendingAuthorization | undefined;
  #oauthState: string | undefined;

  private constructor(options: DimsumOAuthProviderOptions, state: StoredOAuthState) {
    this.#options = options;
    this.#state = state;
  }

  /** Loads the stored state (a record made for another URL is ignored). */
  static async open(options: DimsumOAuthProviderOptions): Promise<DimsumOAuthProvider> {
    const stored = await options.store.load(options.server);
    const state = stored && stored.url === options.url ? stored : { url: options.url };
    const provider = new DimsumOAuthProvider(options, state);
    const wanted = options.authorizer?.redirectUrl(options.server);
    if (wanted && state.redirectUrl !== wanted) {
      // A new redirect URI needs a new registration (pre-registered clients keep theirs).
      if (state.clientInformation && !options.config.clientId) delete state.clientInformation;
      state.redirectUrl = wanted;
    }
    return provider;
  }

  get interactive(): boolean {
    return this.#options.authorizer !== undefined;
  }

  get redirectUrl(): string {
    return this.#state.redirectUrl ?? HEADLESS_REDIRECT;
  }

  get clientMetadataUrl(): string | undefined {
    return this.#options.config.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    const { config } = this.#options;
    return {
      client_name: this.#options.clientName ?? "Dimsum",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: config.clientSecret ? "client_secret_basic" : "none",
      ...(config.scope ? { scope: config.scope } : {}),
    };
  }

  state(): string {
    this.#oauthState = randomBytes(16).toString("base64url");
    return this.#oauthState;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    if (this.#state.clientInformation) return this.#state.clientInformation;
    const { clientId, clientSecret } = this.#options.config;
    if (clientId) return { client_id: clientId, ...(clientSecret ? { client_secret: clientSecret } : {}) };
    if (!this.interactive)
      throw this.#needsLogin("Dimsum is not registered with its authorization server yet");
    return undefined;
  }

  async saveClientInformation(info: OAuthClientInformationMixed): Promise<void> {
    this.#state.clientInformation = info;
    await this.#save();
  }

  tokens(): OAuthTokens | undefined {
    const { tokens, stepUpScope } = this.#state;
    if (!tokens) return undefined;
    // A refresh keeps the old scope: when the server wants more, only a new authorization helps.
    if (stepUpScope && !covers(tokens.scope, stepUpScope) && tokens.refresh_token) {
      const { refresh_token: _dropped, ...rest } = tokens;
      return rest;
    }
    return tokens;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    const previous = this.#state.tokens;
    // A refresh response may leave the refresh token out: keep the one we have.
    const merged =
      !tokens.refresh_token && previous?.refresh_token
        ? { ...tokens, refresh_token: previous.refresh_token }
        : tokens;
    this.#state.tokens = merged;
    if (tokens.expires_in !== undefined) this.#state.expiresAt = Date.now() + tokens.expires_in * 1000;
    else delete this.#state.expiresAt;
    if (this.#state.stepUpScope && covers(merged.scope, this.#state.stepUpScope))
      delete this.#state.stepUpScope;
    delete this.#state.codeVerifier;
    await this.#save();
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    const url = new URL(authorizationUrl);
    const scopes = new Set((url.searchParams.get("scope") ?? "").split(" ").filter(Boolean));
    for (const scope of (this.#state.stepUpScope ?? "").split(" ").filter(Boolean)) scopes.add(scope);
    const supported = this.#state.discovery?.authorizationServerMetadata?.scopes_supported ?? [];
    if (supported.includes(OFFLINE_ACCESS) && !scopes.has(OFFLINE_ACCESS)) {
      scopes.add(OFFLINE_ACCESS);
      url.searchParams.set("prompt", "consent");
    }
    if (scopes.size > 0) url.searchParams.set("scope", [...scopes].join(" "));
    if (!this.interactive) {
      this.#pending = undefined;
      const wider = this.#state.stepUpScope;
      if (wider) {
        const { server } = this.#options;
        throw new DimsumError(
          "unauthenticated",
          `MCP server "${server}" needs more access: it asks for scope "${wider}", which your sign-in does not grant.`,
          { hint: `${this.#hint()} to grant it` },
        );
      }
      throw this.#needsLogin("there is no valid sign-in");
    }
    this.#pending = { url, state: this.#oauthState ?? url.searchParams.get("state") ?? "" };
  }

  /** The authorization the SDK asked for in its last `auth()` call, once. */
  takePendingAuthorization(): PendingAuthorization | undefined {
    const pending = this.#pending;
    this.#pending = undefined;
    return pending;
  }

  async saveCodeVerifier(codeVerifier: string): Promise<void> {
    this.#state.codeVerifier = codeVerifier;
    await this.#save();
  }

  codeVerifier(): string {
    const verifier = this.#state.codeVerifier;
    if (!verifier)
      throw new DimsumError("unauthenticated", `no login to "${this.#options.server}" is in progress`);
    return verifier;
  }

  async invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): Promise<void> {
    if (scope === "all" || scope === "client") delete this.#state.clientInformation;
    if (scope === "all" || scope === "tokens") {
      delete this.#state.tokens;
      delete this.#state.expiresAt;
    }
    if (scope === "all" || scope === "verifier") delete this.#state.codeVerifier;
    if (scope === "all" || scope === "discovery") delete this.#state.discovery;
    await this.#save();
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    this.#state.discovery = state;
    await this.#save();
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.#state.discovery;
  }

  /** Called with every `insufficient_scope` challenge the server sends (step-up). */
  async noteStepUp(scope: string): Promise<void> {
    const wanted = new Set([
      ...(this.#state.tokens?.scope ?? "").split(" ").filter(Boolean),
      ...scope.split(" ").filter(Boolean),
    ]);
    this.#state.stepUpScope = [...wanted].join(" ");
    await this.#save();
  }

  /** Drops the tokens before a fresh login, keeping the registration and the step-up scope. */
  async forgetTokens(): Promise<void> {
    await this.invalidateCredentials("tokens");
  }

  /** The stored state, for status and revocation. */
  snapshot(): StoredOAuthState {
    return structuredClone(this.#state);
  }

  async #save(): Promise<void> {
    await this.#options.store.save(this.#options.server, this.#state);
  }

  #needsLogin(reason: string): DimsumError {
    const { server } = this.#options;
    return new DimsumError("unauthenticated", `MCP server "${server}" needs you to sign in: ${reason}.`, {
      hint: this.#hint(),
    });
  }

  #hint(): string {
    return this.#options.signInHint ?? `run \`dimsum mcp login ${this.#options.server}\``;
  }
}

/** True when the granted scope string includes every scope in `wanted`. */
export function covers(granted: string | undefined, wanted: string): boolean {
  const have = new Set((granted ?? "").split(" ").filter(Boolean));
  return wanted
    .split(" ")
    .filter(Boolean)
    .every((s) => have.has(s));
}
