/**
 * The host names a network policy may list: `registry.npmjs.org`, or `*.example.com` for its
 * subdomains. No scheme, port, path or user: the allow-list proxy matches names only.
 */
import type { NetworkPolicy } from "./types.js";

const LABEL = "[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?";
const HOST = new RegExp(`^(?:\\*\\.)?(?:${LABEL}\\.)*${LABEL}$`, "i");

/** Whether `text` is a host name (or `*.` pattern) a policy may list. */
export function isNetworkHost(text: string): boolean {
  return text.length <= 253 && HOST.test(text);
}

/** What to write instead of a value that is not a host name. */
export const NETWORK_HOST_HINT =
  "give host names such as registry.npmjs.org or *.example.com, without scheme, port or path";

/** The policy with duplicate hosts removed and names lower-cased. */
export function normalizePolicy(policy: NetworkPolicy): NetworkPolicy {
  if (policy.mode !== "allow") return policy;
  return { mode: "allow", hosts: [...new Set(policy.hosts.map((h) => h.trim().toLowerCase()))] };
}
