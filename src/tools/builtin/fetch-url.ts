/**
 * fetch_url: downloads a web page or API response and returns it as text.
 * Each hop (the first request and every redirect) is checked by the network guard, and the request
 * connects to the checked addresses only. Redirects are followed by hand so each one is re-checked.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import * as z from "zod";
import { DimsumError } from "../../errors.js";
import { decodedBody, readCappedBody, sendPinnedRequest } from "../net/http-body.js";
import { defineTool, type ToolContext, type ToolResult, type ZodTool } from "../types.js";
import { renderBody } from "./fetch-content.js";
import { formatSize } from "./files.js";
import {
  checkUrl,
  defaultGuardDeps,
  type GuardDeps,
  parseFetchUrl,
  type ResolvedAddress,
} from "./network-guard.js";
import { errnoCode, errorResult, toolFailure } from "./tool-error.js";

const MAX_REDIRECTS = 5;
const ERROR_EXCERPT_CHARS = 1000;
const USER_AGENT = "dimsum-fetch/0.1 (+https://github.com/dimsum)";
// Credentials meant for one site must not follow a redirect to another.
const ORIGIN_BOUND_HEADERS = ["authorization", "cookie", "proxy-authorization"];

interface Downloaded {
  url: URL;
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  truncated: boolean;
  redirects: number;
}

interface RequestPlan {
  url: URL;
  method: "GET" | "POST";
  headers: Record<string, string>;
  body: string | undefined;
}

function openResponse(plan: RequestPlan, addresses: ResolvedAddress[] | undefined, signal: AbortSignal) {
  const headers: OutgoingHttpHeaders = {
    "user-agent": USER_AGENT,
    accept: "text/html,application/xhtml+xml,application/json;q=0.9,text/plain;q=0.8,*/*;q=0.5",
    "accept-encoding": "gzip, deflate, br",
    ...plan.headers,
  };
  return sendPinnedRequest(
    { url: plan.url, method: plan.method, headers, body: plan.body },
    addresses,
    signal,
  );
}

function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

/** The request to send after a redirect: method, body and credentials adjusted as browsers do. */
function redirectPlan(plan: RequestPlan, status: number, location: string): RequestPlan {
  let url: URL;
  try {
    url = parseFetchUrl(new URL(location, plan.url));
  } catch (err) {
    throw toolFailure(`${plan.url.href} redirected to an unusable location ${location}: ${String(err)}`);
  }
  const headers = { ...plan.headers };
  let method = plan.method;
  let body = plan.body;
  if (status === 303 || ((status === 301 || status === 302) && method === "POST")) {
    method = "GET";
    body = undefined;
    for (const name of Object.keys(headers)) if (name.toLowerCase() === "content-type") delete headers[name];
  }
  if (url.origin !== plan.url.origin) {
    for (const name of Object.keys(headers)) {
      if (ORIGIN_BOUND_HEADERS.includes(name.toLowerCase())) delete headers[name];
    }
  }
  return { url, method, headers, body };
}

/** Downloads a URL, following up to five redirects and checking every hop. */
async function download(first: RequestPlan, ctx: ToolContext, guard: GuardDeps, signal: AbortSignal) {
  let plan = first;
  for (let redirects = 0; ; redirects++) {
    const addresses = ctx.config.fetch.allowPrivateNetwork
      ? undefined
      : (await checkUrl(plan.url, guard)).addresses;
    const res = await openResponse(plan, addresses, signal);
    const status = res.statusCode ?? 0;
    const location = res.headers.location;
    if (isRedirect(status) && location) {
      res.destroy();
      if (redirects >= MAX_REDIRECTS) {
        throw toolFailure(`Too many redirects (more than ${MAX_REDIRECTS}) starting from ${first.url.href}.`);
      }
      plan = redirectPlan(plan, status, location);
      continue;
    }
    const { body, truncated } = await readCappedBody(decodedBody(res), ctx.config.fetch.maxBytes);
    const downloaded: Downloaded = {
      url: plan.url,
      status,
      statusText: res.statusMessage ?? "",
      headers: res.headers,
      body,
      truncated,
      redirects,
    };
    return downloaded;
  }
}

/** A network failure in words: refused, unknown host, TLS trouble, reset. */
function describeNetworkError(err: unknown, url: string): DimsumError {
  if (err instanceof DimsumError) return err;
  const code = errnoCode(err);
  const message = err instanceof Error ? err.message : String(err);
  if (code === "ECONNREFUSED") return toolFailure(`The server at ${url} refused the connection.`);
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") {
    return toolFailure(`Could not resolve the host of ${url}.`, "check the URL");
  }
  if (code?.startsWith("CERT_") || code?.includes("CERT") || code === "DEPTH_ZERO_SELF_SIGNED_CERT") {
    return toolFailure(`The TLS certificate of ${url} was rejected (${code}).`);
  }
  return toolFailure(`Could not fetch ${url}: ${message}${code ? ` (${code})` : ""}.`);
}

/** Caps text at `max` characters, saying how much was left out. */
function capChars(text: string, max: number, hint: string): { text: string; note?: string } {
  if (text.length <= max) return { text };
  return {
    text: text.slice(0, max),
    note: `[truncated: showing the first ${max} of ${text.length} characters${hint}]`,
  };
}

async function present(got: Downloaded, maxChars: number, maxBytes: number): Promise<ToolResult> {
  const contentType = got.headers["content-type"];
  const rendered = await renderBody(contentType, got.body, got.url.href, got.truncated);
  const ok = got.status >= 200 && got.status < 300;
  const capped = ok
    ? capChars(rendered.text, maxChars, "; raise maxChars to see more")
    : capChars(rendered.text, ERROR_EXCERPT_CHARS, "");
  const lines = [
    `URL: ${got.url.href}${got.redirects > 0 ? ` (after ${got.redirects} redirect${got.redirects > 1 ? "s" : ""})` : ""}`,
    `Status: ${got.status} ${got.statusText}`.trimEnd(),
    `Content-Type: ${contentType ?? "(none)"}`,
  ];
  if (rendered.title) lines.push(`Title: ${rendered.title}`);
  lines.push("", capped.text || "(empty body)");
  if (rendered.note) lines.push(rendered.note);
  if (got.truncated) {
    lines.push(`[download stopped at ${formatSize(maxBytes)} (tools.fetch.maxBytes); the rest was not read]`);
  }
  if (capped.note) lines.push(capped.note);
  const data = {
    url: got.url.href,
    status: got.status,
    contentType,
    kind: rendered.kind,
    bytes: got.body.length,
  };
  if (ok) return { content: lines.join("\n"), data };
  lines[0] = `HTTP ${got.status} ${got.statusText} from ${got.url.href}`.trimEnd();
  return { content: lines.join("\n"), isError: true, data };
}

const fetchUrlParams = z.object({
  url: z.string().min(1).describe("Absolute http:// or https:// URL"),
  method: z.enum(["GET", "POST"]).default("GET"),
  headers: z.record(z.string(), z.string()).optional().describe("Extra request headers"),
  body: z.string().optional().describe("Request body for POST"),
  maxChars: z
    .number()
    .int()
    .min(100)
    .max(200_000)
    .default(20_000)
    .describe("Cap on the returned text (default 20000 characters)"),
});

/** Builds fetch_url with the given guard; tests pass a fake resolver, everyone else the default. */
export function createFetchUrlTool(guard: GuardDeps = defaultGuardDeps): ZodTool {
  return defineTool({
    name: "fetch_url",
    // Read-only: run again after a restart interrupted it.
    idempotent: true,
    description:
      "Fetch a public http(s) URL and return its content as text: HTML pages become readable text with links, " +
      "JSON is pretty-printed. Private and local network addresses are refused.",
    parameters: fetchUrlParams,
    async execute(args, ctx) {
      const policy = ctx.config.fetch;
      const controller = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, policy.timeoutMs);
      const onAbort = () => controller.abort();
      ctx.signal.addEventListener("abort", onAbort, { once: true });
      if (ctx.signal.aborted) controller.abort();
      try {
        const headers = { ...(args.headers ?? {}) };
        if (
          args.body !== undefined &&
          !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")
        ) {
          headers["content-type"] = /^\s*[[{]/.test(args.body)
            ? "application/json"
            : "text/plain; charset=utf-8";
        }
        const plan: RequestPlan = {
          url: parseFetchUrl(args.url),
          method: args.method,
          headers,
          body: args.body,
        };
        const got = await download(plan, ctx, guard, controller.signal);
        return await present(got, args.maxChars, policy.maxBytes);
      } catch (err) {
        if (timedOut) {
          return errorResult(
            new DimsumError("timeout", `Fetching ${args.url} timed out after ${policy.timeoutMs / 1000} s.`, {
              hint: "try again later or raise tools.fetch.timeoutSeconds",
            }),
          );
        }
        if (ctx.signal.aborted)
          return errorResult(new DimsumError("aborted", `Fetching ${args.url} was aborted.`));
        return errorResult(describeNetworkError(err, args.url));
      } finally {
        clearTimeout(timer);
        ctx.signal.removeEventListener("abort", onAbort);
      }
    },
  });
}

/** fetch_url with the real resolver and the public-address guard. */
export const fetchUrlTool: ZodTool = createFetchUrlTool();

/** The fetch tool, as a list for symmetry with the other built-in groups. */
export const builtinFetchTools: ZodTool[] = [fetchUrlTool];
