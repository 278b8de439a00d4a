/**
 * The OpenID Connect side of a sign-in, on `openid-client` (loaded on first use, so a server without
 * single sign-on never loads it): discovery, the authorization URL with PKCE, `state` and `nonce`,
 * and the code exchange whose ID token is checked (signature against the provider's keys, fetched
 * again when it rotates them; issuer, audience, expiry, nonce).
 */
import { DimsumError } from "../../errors.js";
import type { SsoProvider } from "./sso-store.js";

type OpenIdClient = typeof import("openid-client");
type Configuration = import("openid-client").Configuration;

/** What a sign-in keeps between leaving for the provider and coming back. */
export interface PendingSignIn {
  providerId: string;
  state: string;
  nonce: string;
  verifier: string;
  /** Where the person goes after signing in (a path on this server). */
  returnTo: string;
  /** When the attempt expires (ms since the epoch). */
  expiresAt: number;
}

/** The claims of a checked ID token that sign-in uses. */
export interface SignInClaims {
  subject: string;
  email: string | undefined;
  emailVerified: boolean;
  name: string | undefined;
  /** Every claim, for the role claim. */
  all: Record<string, unknown>;
}

let loaded: Promise<OpenIdClient> | undefined;

async function openIdClient(): Promise<OpenIdClient> {
  loaded ??= import("openid-client").catch((err: unknown) => {
    loaded = undefined;
    throw new DimsumError(
      "config",
      "single sign-on needs the openid-client package, which is not installed",
      {
        hint: "run `npm install openid-client` where Dimsum is installed",
        cause: err,
      },
    );
  });
  return loaded;
}

/** Plain http is for a provider on this machine only (a local Keycloak, tests). */
function loopback(url: URL): boolean {
  return ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
}

/**
 * The provider's configuration, read at each step of each sign-in: sign-ins are rare, and a key the
 * provider rotated in is known at once (the key set is fetched with it).
 */
export class OidcClients {
  async #config(provider: SsoProvider): Promise<Configuration> {
    const client = await openIdClient();
    const issuer = new URL(provider.issuer);
    if (issuer.protocol !== "https:" && !loopback(issuer)) {
      throw new DimsumError("config", `the issuer of "${provider.name}" must be an https:// URL`, {
        hint: "plain http is accepted only for a provider on this machine (localhost)",
      });
    }
    return client
      .discovery(
        issuer,
        provider.clientId,
        undefined,
        provider.clientSecret === "" ? client.None() : client.ClientSecretPost(provider.clientSecret),
        issuer.protocol === "http:" ? { execute: [client.allowInsecureRequests] } : undefined,
      )
      .then((discovered) => {
        // The ID token's signature is checked against the provider's published keys even though it
        // came straight from the token endpoint (the spec lets a client skip that; we do not).
        client.enableNonRepudiationChecks(discovered);
        return discovered;
      })
      .catch((err: unknown) => {
        throw new DimsumError(
          "provider_unavailable",
          `could not read the sign-in settings of "${provider.name}"`,
          {
            hint: `check that ${provider.issuer}/.well-known/openid-configuration answers from this server`,
            cause: err,
          },
        );
      });
  }

  /** Where to send the person, and what to keep until they come back. */
  async begin(
    provider: SsoProvider,
    redirectUri: string,
    returnTo: string,
    ttlMs = 10 * 60_000,
  ): Promise<{ url: string; pending: PendingSignIn }> {
    const client = await openIdClient();
    const config = await this.#config(provider);
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: "openid email profile",
      response_type: "code",
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      state,
      nonce,
    });
    return {
      url: url.href,
      pending: { providerId: provider.id, state, nonce, verifier, returnTo, expiresAt: Date.now() + ttlMs },
    };
  }

  /**
   * Exchanges the code of the provider's redirect (`callbackUrl`, the full URL it came back to) and
   * checks the ID token; a `forbidden` DimsumError saying why when anything does not hold.
   */
  async finish(provider: SsoProvider, callbackUrl: URL, pending: PendingSignIn): Promise<SignInClaims> {
    const client = await openIdClient();
    const config = await this.#config(provider);
    let claims: Record<string, unknown> | undefined;
    try {
      const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: pending.verifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      claims = tokens.claims() as Record<string, unknown> | undefined;
    } catch (err) {
      throw new DimsumError("forbidden", `"${provider.name}" did not confirm this sign-in: ${reason(err)}`, {
        hint: "start the sign-in again from the sign-in page",
        cause: err,
      });
    }
    if (!claims || typeof claims.sub !== "string") {
      throw new DimsumError("forbidden", `"${provider.name}" sent no ID token`, {
        hint: "the provider's client must allow the openid scope",
      });
    }
    return {
      subject: claims.sub,
      email: typeof claims.email === "string" ? claims.email.toLowerCase() : undefined,
      emailVerified: claims.email_verified === true || claims.email_verified === "true",
      name: typeof claims.name === "string" ? claims.name : undefined,
      all: claims,
    };
  }
}

/**
 * A short reason from openid-client's errors: their code, and the message of the check that failed
 * (openid-client wraps oauth4webapi's, which names the claim: `unexpected ID Token "nonce" claim value`).
 * Never a token.
 */
function reason(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  let inner: Error = err;
  while (inner.cause instanceof Error) inner = inner.cause;
  const code = "code" in err && typeof err.code === "string" ? err.code : undefined;
  const error = "error" in err && typeof err.error === "string" ? err.error : undefined;
  return [error ?? code, inner.message].filter(Boolean).join(": ");
}
