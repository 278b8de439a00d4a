/**
 * Server-side request forgery guard for fetch_url. A host is resolved once, every address it
 * resolves to must be public, and the caller then connects to exactly those addresses (see
 * `pinnedLookup`) so a second DNS answer cannot swap in an internal one.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import type { LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";
import { errnoCode, toolFailure } from "./tool-error.js";

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all its addresses. */
export type HostLookup = (hostname: string) => Promise<ResolvedAddress[]>;

export interface AddressVerdict {
  allowed: boolean;
  /** The address class, e.g. "unicast", "loopback", "private", "linkLocal". */
  range: string;
}

export interface GuardDeps {
  lookup: HostLookup;
  isAddressAllowed: (address: string) => AddressVerdict;
}

export interface CheckedTarget {
  url: URL;
  /** Addresses that passed the check; connect only to these. */
  addresses: ResolvedAddress[];
}

/** Resolves with the system resolver, every address, in the resolver's order. */
export const systemLookup: HostLookup = async (hostname) => {
  const results = await dnsLookup(hostname, { all: true, verbatim: true });
  return results.map((r) => ({ address: r.address, family: r.family === 6 ? 6 : 4 }));
};

// Prefixes whose last 32 bits carry an IPv4 address that is what the packet really reaches.
const NAT64 = ipaddr.IPv6.parseCIDR("64:ff9b::/96");
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR("::/96");

function embeddedIPv4(parts: number[], high: number): ipaddr.IPv4 {
  const hi = parts[high] ?? 0;
  const lo = parts[high + 1] ?? 0;
  return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
}

/**
 * Only globally routable unicast addresses are allowed: loopback, private, link-local (including
 * cloud metadata at 169.254.169.254), unique-local, CGNAT, multicast, unspecified, reserved and
 * IPv6 forms that wrap such an IPv4 address are refused.
 */
export function isAddressAllowed(address: string): AddressVerdict {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // process() turns IPv4-mapped IPv6 (::ffff:127.0.0.1) into the IPv4 address it stands for.
    parsed = ipaddr.process(address);
  } catch {
    return { allowed: false, range: "invalid" };
  }
  if (parsed.kind() === "ipv4") {
    const range = parsed.range();
    return { allowed: range === "unicast", range };
  }
  const v6 = parsed as ipaddr.IPv6;
  const range = v6.range();
  // Deprecated IPv4-compatible addresses (::a.b.c.d) count as unicast in ipaddr.js; refuse them.
  if (range === "unicast" && v6.match(IPV4_COMPATIBLE)) return { allowed: false, range: "ipv4Compatible" };
  if (range === "rfc6052" && v6.match(NAT64)) return wrapped(embeddedIPv4(v6.parts, 6), range);
  if (range === "6to4") return wrapped(embeddedIPv4(v6.parts, 1), range);
  if (range === "rfc6145") return wrapped(embeddedIPv4(v6.parts, 6), range);
  return { allowed: range === "unicast", range };
}

function wrapped(inner: ipaddr.IPv4, outer: string): AddressVerdict {
  const range = inner.range();
  return range === "unicast"
    ? { allowed: true, range: outer }
    : { allowed: false, range: `${outer}/${range}` };
}

function article(word: string): string {
  return /^[aeiou]/i.test(word) ? "an" : "a";
}

/** The host name of a URL without IPv6 brackets. */
function bareHost(url: URL): string {
  return url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
}

/** Parses a URL the tool may fetch: http or https only. */
export function parseFetchUrl(raw: string | URL): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw toolFailure(`${String(raw)} is not a valid URL.`, "give an absolute http:// or https:// URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw toolFailure(`Only http and https URLs can be fetched, not ${url.protocol}.`, "use an http(s) URL");
  }
  return url;
}

/**
 * Checks that a URL is http(s) and that its host resolves only to allowed addresses.
 * Refuses before any connection is made.
 */
export async function checkUrl(raw: string | URL, deps: GuardDeps): Promise<CheckedTarget> {
  const url = parseFetchUrl(raw);
  const host = bareHost(url);
  let addresses: ResolvedAddress[];
  if (ipaddr.isValid(host)) {
    addresses = [{ address: host, family: host.includes(":") ? 6 : 4 }];
  } else {
    try {
      addresses = await deps.lookup(host);
    } catch (err) {
      throw toolFailure(
        `Could not resolve the host ${host} (${errnoCode(err) ?? String(err)}).`,
        "check the URL's host name",
      );
    }
    if (addresses.length === 0) throw toolFailure(`The host ${host} has no addresses.`, "check the URL");
  }
  for (const { address } of addresses) {
    const verdict = deps.isAddressAllowed(address);
    if (!verdict.allowed) {
      const via = address === host ? "" : ` (${host} resolves to ${address})`;
      throw toolFailure(
        `Refused to fetch ${url.href}: ${address} is ${article(verdict.range)} ${verdict.range} address${via}, not a public one.`,
        "fetch_url only reaches public internet addresses; set tools.fetch.allowPrivateNetwork to true to allow private networks",
      );
    }
  }
  return { url, addresses };
}

/** A `lookup` for http.request that answers with the already-checked addresses only. */
export function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) {
      callback(null, addresses);
      return;
    }
    const wanted = options.family === 4 || options.family === 6 ? options.family : undefined;
    const pick = addresses.find((a) => wanted === undefined || a.family === wanted) ?? addresses[0];
    if (!pick) {
      callback(Object.assign(new Error("no checked address"), { code: "ENOTFOUND" }), "", 4);
      return;
    }
    callback(null, pick.address, pick.family);
  };
}

/** The real resolver and address rules. */
export const defaultGuardDeps: GuardDeps = { lookup: systemLookup, isAddressAllowed };
