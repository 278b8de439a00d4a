/**
 * A real OpenID Connect provider (the `oidc-provider` package) on loopback, for single sign-on tests:
 * one confidential client, accounts given by the test, its built-in login and consent pages, and
 * signing keys the test holds, so it can make the token endpoint answer with a tampered ID token
 * (another nonce, expired, signed by a stranger's key) as an attacker or a broken provider would.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { decodeJwt, exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import Provider from "oidc-provider";

export interface LocalAccount {
  email: string;
  emailVerified?: boolean;
  name?: string;
  groups?: string[];
}

export type IdTokenTamper = "nonce" | "expired" | "foreign-key";

export interface LocalOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The next token responses carry an ID token changed this way (undefined: as issued). */
  tamper: IdTokenTamper | undefined;
  /** Rotates the signing key: a new key (new `kid`) signs from now on. */
  rotateKey(): Promise<void>;
  close(): Promise<void>;
}

const KID = "test-key-1";

async function signingKey(kid: string) {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  return { privateKey, jwk: { ...(await exportJWK(privateKey)), kid, alg: "RS256", use: "sig" } as JWK };
}

/** Starts the provider; `redirectUri` is the Dimsum callback it may send codes to. */
export async function startLocalOidcProvider(
  redirectUris: string[],
  accounts: Record<string, LocalAccount>,
): Promise<LocalOidcProvider> {
  let keys = [await signingKey(KID)];
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = "dimsum-test";
  const clientSecret = "test-client-secret-0123456789abcdef";

  const build = () =>
    new Provider(issuer, {
      clients: [
        {
          client_id: clientId,
          client_secret: clientSecret,
          redirect_uris: redirectUris,
          grant_types: ["authorization_code"],
          response_types: ["code"],
          token_endpoint_auth_method: "client_secret_post",
        },
      ],
      jwks: { keys: keys.map((k) => k.jwk) },
      claims: { openid: ["sub"], email: ["email", "email_verified", "groups"], profile: ["name"] },
      // The claims go in the ID token itself, as Keycloak and Entra ID put them.
      conformIdTokenClaims: false,
      pkce: { required: () => true },
      features: { devInteractions: { enabled: true } },
      cookies: { keys: ["local-oidc-cookie-key"] },
      ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600 },
      findAccount: (_ctx, sub) => {
        const account = accounts[sub];
        if (!account) return undefined;
        return {
          accountId: sub,
          claims: () => ({
            sub,
            email: account.email,
            email_verified: account.emailVerified ?? true,
            ...(account.name ? { name: account.name } : {}),
            ...(account.groups ? { groups: account.groups } : {}),
          }),
        };
      },
    });
  let provider = build();

  const state: LocalOidcProvider = {
    issuer,
    clientId,
    clientSecret,
    tamper: undefined,
    async rotateKey() {
      keys = [await signingKey(`test-key-${Date.now()}`), ...keys];
      provider = build();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  async function tampered(idToken: string, how: IdTokenTamper): Promise<string> {
    const claims = decodeJwt(idToken);
    const now = Math.floor(Date.now() / 1000);
    const changed =
      how === "nonce"
        ? { ...claims, nonce: "not-the-nonce-dimsum-sent" }
        : how === "expired"
          ? { ...claims, iat: now - 7200, exp: now - 3600 }
          : claims;
    const key =
      how === "foreign-key" ? (await signingKey(keys[0]?.jwk.kid ?? KID)).privateKey : keys[0]?.privateKey;
    if (!key) throw new Error("no signing key");
    return new SignJWT(changed).setProtectedHeader({ alg: "RS256", kid: keys[0]?.jwk.kid ?? KID }).sign(key);
  }

  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const how = state.tamper;
    if (how && req.method === "POST" && req.url?.startsWith("/token")) {
      // The token response is held back and its ID token replaced before it leaves.
      const chunks: Buffer[] = [];
      const end = res.end.bind(res);
      res.write = ((chunk: Buffer | string) => {
        chunks.push(Buffer.from(chunk));
        return true;
      }) as typeof res.write;
      res.end = ((chunk?: Buffer | string) => {
        if (chunk) chunks.push(Buffer.from(chunk));
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id_token?: string };
        void (body.id_token ? tampered(body.id_token, how) : Promise.resolve(undefined)).then((token) => {
          const out = JSON.stringify(token ? { ...body, id_token: token } : body);
          res.setHeader("content-length", Buffer.byteLength(out));
          end(out);
        });
        return res;
      }) as typeof res.end;
    }
    provider.callback()(req, res);
  });

  return state;
}

/** A tiny cookie jar per origin, for walking the provider's pages with fetch. */
class CookieJar {
  readonly #cookies = new Map<string, Map<string, string>>();

  header(url: string): string {
    const jar = this.#cookies.get(new URL(url).origin);
    return jar ? [...jar].map(([k, v]) => `${k}=${v}`).join("; ") : "";
  }

  keep(url: string, res: Response): void {
    const origin = new URL(url).origin;
    const jar = this.#cookies.get(origin) ?? new Map<string, string>();
    for (const raw of res.headers.getSetCookie()) {
      const [pair] = raw.split(";");
      const at = pair?.indexOf("=") ?? -1;
      if (!pair || at < 0) continue;
      const value = pair.slice(at + 1);
      if (value === "" || /max-age=0|expires=thu, 01 jan 1970/i.test(raw)) jar.delete(pair.slice(0, at));
      else jar.set(pair.slice(0, at), value);
    }
    this.#cookies.set(origin, jar);
  }
}

/** One browser's walk: requests that keep cookies per origin and do not follow redirects. */
export class Walker {
  readonly jar = new CookieJar();

  async go(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<Response> {
    const headers: Record<string, string> = { cookie: this.jar.header(url) };
    if (init.form) headers["content-type"] = "application/x-www-form-urlencoded";
    const res = await fetch(url, {
      method: init.method ?? (init.form ? "POST" : "GET"),
      headers,
      redirect: "manual",
      ...(init.form ? { body: new URLSearchParams(init.form).toString() } : {}),
    });
    this.jar.keep(url, res);
    return res;
  }

  /**
   * From Dimsum's start URL through the provider's login (as `accountId`) and consent pages to the
   * redirect back to Dimsum; returns that callback URL (not yet visited).
   */
  async toCallback(startUrl: string, accountId: string, callbackPrefix: string): Promise<string> {
    let url = startUrl;
    for (let hop = 0; hop < 20; hop++) {
      const res = await this.go(url);
      const location = res.headers.get("location");
      if (location) {
        const next = new URL(location, url).href;
        if (next.startsWith(callbackPrefix)) return next;
        url = next;
        continue;
      }
      const html = await res.text();
      const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
      const prompt = /name="prompt" value="([^"]+)"/.exec(html)?.[1];
      if (res.status !== 200 || !action || !prompt) {
        throw new Error(`the provider answered ${res.status} at ${url}: ${html.slice(0, 300)}`);
      }
      const form: Record<string, string> =
        prompt === "login" ? { prompt, login: accountId, password: "any" } : { prompt };
      const posted = await this.go(new URL(action, url).href, { form });
      const after = posted.headers.get("location");
      if (!after) throw new Error(`the provider's ${prompt} form answered ${posted.status}`);
      url = new URL(after, url).href;
    }
    throw new Error("too many redirects on the way to the provider and back");
  }
}
