/**
 * Which OAuth client an HTTP MCP server gets: the client-credentials grant (secret or private-key
 * JWT) from mcp.json, or the person's authorization-code login kept in a CredentialStore. Servers
 * with a static `Authorization` header get none.
 */

import type { FetchLike, OAuthClientProvider } from "@modelcontextprotocol/client";
import {
  ClientCredentialsProvider,
  extractWWWAuthenticateParams,
  PrivateKeyJwtProvider,
} from "@modelcontextprotocol/client";
import type { McpHttpServerConfig, McpOAuthAuthorizationCode, McpOAuthClientCredentials } from "../config.js";
import { type CredentialStore, memoryCredentialStore } from "./credential-store.js";
import { EnterpriseAuthProvider } from "./enterprise.js";
import { DimsumOAuthProvider, type OAuthAuthorizer } from "./provider.js";

export interface McpAuthOptions {
  /** Where logins are kept; without one, only servers with an explicit `oauth` entry get OAuth. */
  credentials?: CredentialStore;
  /** Present in interactive front ends and `dimsum mcp login`: runs the browser step. */
  authorizer?: OAuthAuthorizer;
  /** What the person should do to sign in, in this front end (default: `dimsum mcp login`). */
  signInHint?: (server: string) => string;
}

export interface HttpAuth {
  provider: OAuthClientProvider;
  /** The person's login, when the server uses the authorization-code grant. */
  login?: DimsumOAuthProvider;
  /** Wraps fetch to notice `insufficient_scope` challenges (step-up). */
  fetch?: FetchLike;
}

/** The OAuth client for `server`, or undefined when it needs none. */
export async function httpAuthFor(
  server: McpHttpServerConfig,
  options: McpAuthOptions,
): Promise<HttpAuth | undefined> {
  const { oauth } = server;
  if (oauth?.grant === "client_credentials") return { provider: clientCredentials(oauth) };
  if (oauth?.grant === "enterprise") return { provider: new EnterpriseAuthProvider(oauth, server.url) };
  const hasAuthorizationHeader = Object.keys(server.headers).some((h) => h.toLowerCase() === "authorization");
  if (!oauth && (hasAuthorizationHeader || !options.credentials)) return undefined;
  const config: McpOAuthAuthorizationCode = oauth ?? { grant: "authorization_code" };
  const login = await DimsumOAuthProvider.open({
    server: server.name,
    url: server.url,
    config,
    store: options.credentials ?? memoryCredentialStore(),
    ...(options.authorizer ? { authorizer: options.authorizer } : {}),
    ...(options.signInHint ? { signInHint: options.signInHint(server.name) } : {}),
  });
  return { provider: login, login, fetch: stepUpWatcher(login) };
}

function clientCredentials(oauth: McpOAuthClientCredentials): OAuthClientProvider {
  const scope = oauth.scope ? { scope: oauth.scope } : {};
  if (oauth.privateKey) {
    return new PrivateKeyJwtProvider({
      clientId: oauth.clientId,
      privateKey: oauth.privateKey,
      algorithm: oauth.algorithm ?? "ES256",
      clientName: "dimsum",
      ...scope,
    });
  }
  return new ClientCredentialsProvider({
    clientId: oauth.clientId,
    clientSecret: oauth.clientSecret ?? "",
    clientName: "dimsum",
    ...scope,
  });
}

function stepUpWatcher(login: DimsumOAuthProvider): FetchLike {
  return async (url, init) => {
    const response = await fetch(url, init);
    if (response.status === 403) {
      const { error, scope } = extractWWWAuthenticateParams(response);
      if (error === "insufficient_scope" && scope) await login.noteStepUp(scope);
    }
    return response;
  };
}
