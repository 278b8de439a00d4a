/**
 * The check every URL an admin saves for the server to call (remote MCP servers, remote A2A agents)
 * goes through: http(s) only and, unless `tools.fetch.allowPrivateNetwork` is set, every address its
 * host resolves to must be public, so Settings cannot point the server at its own network. A URL with
 * a user name or password in it is refused: secrets go in the (sealed) token, never in what lists show.
 */
import { isIP } from "node:net";
import { invalid } from "../../errors.js";
import { isAddressAllowed, systemLookup } from "../../tools/builtin/network-guard.js";

/** What the URL is for, in messages: e.g. "MCP server" with an example URL. */
export interface RemoteUrlKind {
  what: string;
  example: string;
}

/** The URL with any `user:password@` removed, fit to show. */
export function withoutCredentials(url: string): string {
  if (!URL.canParse(url)) return url.replace(/\/\/[^/@]*@/, "//");
  const parsed = new URL(url);
  if (parsed.username === "" && parsed.password === "") return url;
  parsed.username = "";
  parsed.password = "";
  return parsed.toString();
}

/** Refuses (400) a URL that is not http(s) or, unless `allowPrivate`, reaches a private address. */
export async function checkRemoteUrl(url: string, allowPrivate: boolean, kind: RemoteUrlKind): Promise<void> {
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    throw invalid(
      `"${withoutCredentials(url)}" is not an http(s) URL`,
      `use a full URL such as ${kind.example}`,
    );
  }
  const parsed = new URL(url);
  if (parsed.username !== "" || parsed.password !== "") {
    throw invalid(
      `${kind.what} URL ${withoutCredentials(url)} carries a user name or password`,
      "remove them from the URL and give the secret as the token, which is kept sealed and never shown",
    );
  }
  if (allowPrivate) return;
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  const fix = `remote ${kind.what}s must be on a public address; set tools.fetch.allowPrivateNetwork to true in the config to allow private networks`;
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await systemLookup(host)).map((a) => a.address);
  } catch {
    throw invalid(`${kind.what} URL ${url} is refused: its host ${host} does not resolve`, "check the URL");
  }
  for (const address of addresses) {
    const verdict = isAddressAllowed(address);
    if (!verdict.allowed) {
      throw invalid(`${kind.what} URL ${url} is refused: ${address} is a ${verdict.range} address`, fix);
    }
  }
}
