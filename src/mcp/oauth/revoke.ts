/**
 * Logout: asks the authorization server to revoke the stored tokens (RFC 7009) when it offers a
 * revocation endpoint. The local record is deleted by the caller whatever the answer.
 */
import type { StoredOAuthState } from "./credential-store.js";

export type RevokeOutcome =
  | { kind: "revoked" }
  | { kind: "nothing-to-revoke" }
  | { kind: "unsupported" }
  | { kind: "failed"; reason: string };

export async function revokeTokens(state: StoredOAuthState): Promise<RevokeOutcome> {
  const tokens = state.tokens;
  if (!tokens) return { kind: "nothing-to-revoke" };
  // OIDC discovery documents may carry it too, though their type does not name it.
  const metadata = state.discovery?.authorizationServerMetadata as
    | { revocation_endpoint?: unknown }
    | undefined;
  const endpoint =
    typeof metadata?.revocation_endpoint === "string" ? metadata.revocation_endpoint : undefined;
  if (!endpoint) return { kind: "unsupported" };
  const client = state.clientInformation;
  const revokeOne = async (token: string, hint: string) => {
    const body = new URLSearchParams({ token, token_type_hint: hint });
    const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
    if (client?.client_secret) {
      const pair = `${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`;
      headers.authorization = `Basic ${Buffer.from(pair).toString("base64")}`;
    } else if (client) {
      body.set("client_id", client.client_id);
    }
    const response = await fetch(endpoint, { method: "POST", headers, body });
    if (!response.ok) throw new Error(`HTTP ${response.status} from ${endpoint}`);
  };
  try {
    if (tokens.refresh_token) await revokeOne(tokens.refresh_token, "refresh_token");
    await revokeOne(tokens.access_token, "access_token");
    return { kind: "revoked" };
  } catch (err) {
    return { kind: "failed", reason: err instanceof Error ? err.message : String(err) };
  }
}
