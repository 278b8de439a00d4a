/**
 * Sends one HTTP tool request with node:http(s). Unless private networks are allowed, the host is
 * checked by the network guard first and the socket connects only to the checked addresses.
 * Redirects are not followed: an API tool's URL should point at the final endpoint.
 */
import type { IncomingHttpHeaders } from "node:http";
import { DimsumError } from "../../errors.js";
import { checkUrl, type GuardDeps, type ResolvedAddress } from "../builtin/network-guard.js";
import { decodedBody, readCappedBody, sendPinnedRequest } from "../net/http-body.js";

export interface HttpRequestPlan {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string;
}

export interface HttpResponse {
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body was longer than the byte limit and was cut. */
  truncated: boolean;
}

export interface SendOptions {
  signal: AbortSignal;
  allowPrivateNetwork: boolean;
  guard: GuardDeps;
  maxBytes: number;
}

const DEFAULT_HEADERS: Record<string, string> = {
  "user-agent": "dimsum-http-tool/0.1",
  accept: "application/json, text/plain;q=0.9, */*;q=0.5",
  "accept-encoding": "gzip, deflate, br",
};

/** Sends the request and reads the (decompressed) body up to `maxBytes`. */
export async function sendHttpRequest(plan: HttpRequestPlan, options: SendOptions): Promise<HttpResponse> {
  let addresses: ResolvedAddress[] | undefined;
  if (!options.allowPrivateNetwork) {
    try {
      addresses = (await checkUrl(plan.url, options.guard)).addresses;
    } catch (err) {
      if (!(err instanceof DimsumError)) throw err;
      throw new DimsumError("tool_failed", err.message, {
        hint: 'set "allowPrivateNetwork": true in the tool definition (or tools.fetch.allowPrivateNetwork in the config) to allow private addresses',
      });
    }
  }
  const res = await open(plan, addresses, options.signal);
  const { body, truncated } = await readCappedBody(decodedBody(res), options.maxBytes);
  return {
    status: res.statusCode ?? 0,
    statusText: res.statusMessage ?? "",
    headers: res.headers,
    body: body.toString("utf8"),
    truncated,
  };
}

function open(plan: HttpRequestPlan, addresses: ResolvedAddress[] | undefined, signal: AbortSignal) {
  const headers: Record<string, string | number> = { ...DEFAULT_HEADERS };
  for (const [name, value] of Object.entries(plan.headers)) headers[name.toLowerCase()] = value;
  return sendPinnedRequest(
    { url: plan.url, method: plan.method, headers, body: plan.body },
    addresses,
    signal,
  );
}
