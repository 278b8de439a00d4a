/**
 * DNS-rebinding protection for HTTP endpoints on this machine: a web page on evil.example that
 * resolves to 127.0.0.1 must not reach a local server, so Host and Origin must name the machine.
 */
import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "::1"]);

/**
 * True when the request may proceed: Host (and Origin, if sent) are in `allowedHosts`, or — when no
 * list is given and the request came in on a loopback address — are loopback names.
 */
export function hostAllowed(req: IncomingMessage, allowedHosts?: readonly string[]): boolean {
  const allowed = allowedHosts
    ? new Set(allowedHosts.map((h) => stripBrackets(h.toLowerCase())))
    : isLoopbackAddress(req.socket.localAddress)
      ? LOOPBACK_NAMES
      : undefined;
  if (!allowed) return true;
  const host = hostnameOf(req.headers.host);
  if (host === undefined || !allowed.has(host)) return false;
  const origin = req.headers.origin;
  if (origin === undefined || origin === "null") return origin === undefined;
  const originHost = URL.canParse(origin) ? stripBrackets(new URL(origin).hostname.toLowerCase()) : undefined;
  return originHost !== undefined && allowed.has(originHost);
}

/** The host name of a Host header value, without port or IPv6 brackets. */
export function hostnameOf(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const url = URL.canParse(`http://${value}`) ? new URL(`http://${value}`) : undefined;
  return url ? stripBrackets(url.hostname.toLowerCase()) : undefined;
}

function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const plain = address.startsWith("::ffff:") ? address.slice(7) : address;
  if (plain === "::1") return true;
  return isIP(plain) === 4 && plain.startsWith("127.");
}

function stripBrackets(host: string): string {
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}
