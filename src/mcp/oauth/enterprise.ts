/**
 * Enterprise-managed authorization (SEP-990, "cross-app access"): the person's identity token from
 * the enterprise IdP is exchanged at the IdP for an identity assertion grant (ID-JAG, RFC 8693 token
 * exchange), which the MCP server's authorization server takes in a JWT-bearer grant (RFC 7523).
 * No browser step: the SDK's `auth()` drives discovery and the token request; this provider only
 * prepares the grant.
 */
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  OAuthTokens,
} from "@modelcontextprotocol/client";
import { DimsumError } from "../../errors.js";
import type { McpOAuthEnterprise } from "../config.js";

const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG = "urn:ietf:params:oauth:token-type:id-jag";

export class EnterpriseAuthProvider implements OAuthClientProvider {
  readonly #config: McpOAuthEnterprise;
  readonly #serverUrl: string;
  #tokens: OAuthTokens | undefined;
  #discovery: OAuthDiscoveryState | undefined;

  constructor(config: McpOAuthEnterprise, serverUrl: string) {
    this.#config = config;
    this.#serverUrl = serverUrl;
  }

  get redirectUrl(): undefined {
    return undefined;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "Dimsum",
      redirect_uris: [],
      grant_types: [JWT_BEARER],
      token_endpoint_auth_method: "client_secret_basic",
      ...(this.#config.scope ? { scope: this.#config.scope } : {}),
    };
  }

  clientInformation(): OAuthClientInformationMixed {
    return { client_id: this.#config.clientId, client_secret: this.#config.clientSecret };
  }

  tokens(): OAuthTokens | undefined {
    return this.#tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.#tokens = tokens;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.#discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.#discovery;
  }

  redirectToAuthorization(): void {
    throw new DimsumError("config", "enterprise-managed authorization has no browser step");
  }

  saveCodeVerifier(): void {}

  codeVerifier(): string {
    return "";
  }

  /** Exchanges the identity token for an ID-JAG at the IdP; the grant presents it to the authorization server. */
  async prepareTokenRequest(scope?: string): Promise<URLSearchParams> {
    const audience =
      this.#discovery?.authorizationServerMetadata?.issuer ?? this.#discovery?.authorizationServerUrl;
    if (!audience) throw new DimsumError("internal", "the authorization server is not discovered yet");
    const resource = this.#discovery?.resourceMetadata?.resource ?? this.#serverUrl;
    const idp = this.#config.idp;
    const body = new URLSearchParams({
      grant_type: TOKEN_EXCHANGE,
      subject_token: idp.idToken,
      subject_token_type: ID_TOKEN,
      requested_token_type: ID_JAG,
      audience,
      resource,
      client_id: idp.clientId,
    });
    if (idp.clientSecret) body.set("client_secret", idp.clientSecret);
    if (scope) body.set("scope", scope);
    const response = await fetch(idp.tokenEndpoint, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body,
    });
    const answer = (await response.json().catch(() => ({}))) as {
      access_token?: string;
      issued_token_type?: string;
      error?: string;
      error_description?: string;
    };
    if (!response.ok || !answer.access_token || answer.issued_token_type !== ID_JAG) {
      throw new DimsumError(
        "unauthenticated",
        `the enterprise IdP did not issue an identity assertion grant: ${answer.error ?? `HTTP ${response.status}`}${answer.error_description ? ` (${answer.error_description})` : ""}`,
        { hint: "check the IdP settings of this server in mcp.json and that your ID token is current" },
      );
    }
    const grant = new URLSearchParams({ grant_type: JWT_BEARER, assertion: answer.access_token });
    if (scope) grant.set("scope", scope);
    return grant;
  }
}
