/**
 * Facts about where a request came from: client address, TLS, and same-origin checks. Proxy headers
 * (`X-Forwarded-For`, `X-Forwarded-Proto`) are believed only when the operator says a proxy is in front.
 */
import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";
import type { TLSSocket } from "node:tls";

type HeaderValue = string | string[] | undefined;

function firstHeader(value: HeaderValue): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The client's IP. With a trusted proxy, the right-most `X-Forwarded-For` entry is the address the
 * proxy itself saw (entries to its left are client-supplied and could be forged).
 */
export function clientIpOf(incoming: IncomingMessage | undefined, trustProxy: boolean): string {
  const socketIp = incoming?.socket?.remoteAddress ?? "unknown";
  if (!trustProxy || !incoming) return socketIp;
  const forwarded = firstHeader(incoming.headers["x-forwarded-for"]);
  const last = forwarded?.split(",").pop()?.trim();
  return last && isIP(last) ? last : socketIp;
}

/** Whether the request arrived over TLS (or, with a trusted proxy, `X-Forwarded-Proto: https`). */
export function isSecureRequest(incoming: IncomingMessage | undefined, trustProxy: boolean): boolean {
  if (!incoming) return false;
  if ((incoming.socket as TLSSocket | undefined)?.encrypted === true) return true;
  if (!trustProxy) return false;
  const proto = firstHeader(incoming.headers["x-forwarded-proto"])?.split(",")[0]?.trim().toLowerCase();
  return proto === "https";
}

/**
 * True when `origin` (an `Origin` header) names the same host and port as `host` (the `Host` header).
 * A literal `null` origin (sandboxed frames, file: pages) never matches.
 */
export function sameOrigin(origin: string, host: string | undefined): boolean {
  if (!host || origin === "null") return false;
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return false;
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return false;
  const defaultPort = parsed.protocol === "https:" ? "443" : "80";
  const normalize = (h: string, fallbackPort: string) => {
    const lower = h.toLowerCase();
    return /:\d+$/.test(lower) && !lower.endsWith("]") ? lower : `${lower}:${fallbackPort}`;
  };
  return normalize(parsed.host, defaultPort) === normalize(host, defaultPort);
}
