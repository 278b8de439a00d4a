/**
 * Turns a checked HTTP tool definition into a JSON Schema tool. Each call renders the templates,
 * runs the steps (whose extracted values feed later requests), sends the final request and returns
 * the extracted or raw response. Every text that leaves here passes through the redactor, so env
 * secrets never reach the model, even when a server echoes them back.
 */

import { DimsumError, toDimsumError } from "../../errors.js";
import type { EnvMap } from "../../shared/env-map.js";
import { defaultGuardDeps, type GuardDeps } from "../builtin/network-guard.js";
import type { JsonSchemaTool, ToolContext, ToolResult } from "../types.js";
import {
  type CheckedHttpTool,
  DEFAULT_MAX_RESPONSE_CHARS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  type HttpRequestTemplate,
} from "./definition.js";
import { extractAll, extractPath } from "./extract.js";
import { createRedactor, type Redactor } from "./redact.js";
import { type HttpRequestPlan, type HttpResponse, sendHttpRequest } from "./send-request.js";
import {
  encodeAsText,
  encodeForJsonText,
  encodeForUrl,
  renderJsonValue,
  renderTemplate,
  resolvePlaceholder,
  type TemplateScope,
  toText,
  wholePlaceholder,
} from "./template.js";

export interface HttpToolOptions {
  /** Where `{{env.NAME}}` values come from (read at call time). */
  env: EnvMap;
  /** Allow private addresses for every HTTP tool (e.g. from the config), not only those whose definition says so. */
  allowPrivateNetwork?: boolean;
  /** Resolver and address rules; tests swap in a fake resolver. */
  guard?: GuardDeps;
  /** Largest response body read, in bytes (default 2 MiB). */
  maxResponseBytes?: number;
}

const DEFAULT_MAX_RESPONSE_BYTES = 2 * 1024 * 1024;
const ERROR_EXCERPT_CHARS = 300;

/** A JSON Schema tool that calls the HTTP API a definition describes. */
export function createHttpTool(checked: CheckedHttpTool, options: HttpToolOptions): JsonSchemaTool {
  const { definition } = checked;
  const requestTimeoutMs = definition.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const describeRedactor = redactorFor(checked, options.env);
  return {
    kind: "json",
    name: definition.name,
    description: describeRedactor(definition.description),
    parameters: definition.parameters,
    // The registry's limit must outlast every request's own timeout, so ours is the one that fires.
    timeoutMs: requestTimeoutMs * (checked.steps.length + 1) + 1_000,
    execute: async (args, ctx) => {
      // Read env per call, so a rotated secret is both used and redacted.
      const redact = redactorFor(checked, options.env);
      try {
        return redactResult(await callHttpTool(checked, args, ctx, options, requestTimeoutMs), redact);
      } catch (err) {
        return { content: redact(toDimsumError(err, "tool_failed").toLine()), isError: true };
      }
    },
  };
}

function redactorFor(checked: CheckedHttpTool, env: EnvMap): Redactor {
  return createRedactor(checked.envNames.map((name) => env[name]));
}

async function callHttpTool(
  checked: CheckedHttpTool,
  args: Record<string, unknown>,
  ctx: ToolContext,
  options: HttpToolOptions,
  timeoutMs: number,
): Promise<ToolResult> {
  const { definition } = checked;
  const params: Record<string, unknown> = withDefaults(definition.parameters, args);
  const shown: Record<string, unknown> = {};
  const send = (template: HttpRequestTemplate) =>
    sendWithTimeout(buildPlan(template, { params, env: options.env }), ctx, options, {
      timeoutMs,
      allowPrivateNetwork:
        definition.allowPrivateNetwork === true ||
        options.allowPrivateNetwork === true ||
        ctx.config.fetch.allowPrivateNetwork,
      label: definition.name,
    });

  for (const { step, extract } of checked.steps) {
    const response = await send(step);
    const failure = failureOf(response, step.method, step.name);
    if (failure) return failure;
    const json = parseJsonBody(response, `step ${step.name ?? ""}`.trim());
    for (const { name, path } of extract) {
      const value = extractPath(json, path) ?? undefined;
      if (value === undefined && !path.optional) {
        const message = step.missingMessage
          ? renderTemplate(step.missingMessage, { params, env: options.env }, encodeAsText)
          : `The ${step.name ?? "first"} request returned nothing at \`${path.text}\`.`;
        return { content: message, isError: true };
      }
      params[name] = value ?? null;
      if (step.includeInResult) shown[name] = value ?? null;
    }
  }

  const response = await send(definition);
  const failure = failureOf(response, definition.method);
  if (failure) return failure;
  const maxChars = definition.maxResponseChars ?? DEFAULT_MAX_RESPONSE_CHARS;
  const data = { status: response.status };
  if (definition.method === "HEAD")
    return { content: `HTTP ${response.status} ${response.statusText}`, data };
  if (checked.responsePaths) {
    const json = parseJsonBody(response, "response");
    return {
      content: cap(JSON.stringify({ ...shown, ...extractAll(json, checked.responsePaths) }), maxChars),
      data,
    };
  }
  if (Object.keys(shown).length > 0) {
    const json = tryParseJson(response.body);
    if (json !== undefined)
      return { content: cap(JSON.stringify({ ...shown, response: json }), maxChars), data };
  }
  const note = response.truncated ? "\n[the response was longer than the download limit and was cut]" : "";
  return { content: cap(response.body, maxChars) + note, data };
}

/** The request for a template: URL and query encoded, headers as text, body as JSON or a form. */
export function buildPlan(template: HttpRequestTemplate, scope: TemplateScope): HttpRequestPlan {
  const rendered = renderTemplate(template.url, scope, encodeForUrl);
  let url: URL;
  try {
    url = new URL(rendered);
  } catch {
    throw new DimsumError("tool_failed", `The tool's URL ${rendered} is not a valid URL.`, {
      hint: "check the url template and the env values it uses",
    });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new DimsumError("tool_failed", `The tool's URL must be http or https, not ${url.protocol}.`);
  }
  for (const [key, raw] of Object.entries(template.query ?? {})) {
    const value = typeof raw === "string" ? renderQueryValue(raw, scope) : raw;
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) url.searchParams.append(key, toText(item));
  }
  const headers: Record<string, string> = {};
  for (const [name, raw] of Object.entries(template.headers ?? {})) {
    const whole = wholePlaceholder(raw);
    if (whole && resolvePlaceholder(whole, scope) === undefined) continue;
    const value = renderTemplate(raw, scope, encodeAsText);
    if (/[\r\n]/.test(value)) {
      throw new DimsumError("tool_failed", `The value for the header ${name} contains a line break.`, {
        hint: "header values must be a single line",
      });
    }
    headers[name] = value;
  }
  const plan: HttpRequestPlan = { method: template.method, url, headers };
  if (template.body !== undefined) {
    const body = renderBody(template, scope);
    plan.body = body.text;
    if (!Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) {
      headers["content-type"] = body.contentType;
    }
  }
  return plan;
}

function renderQueryValue(raw: string, scope: TemplateScope): unknown {
  const whole = wholePlaceholder(raw);
  // A lone placeholder keeps its value: missing leaves the key out, a list repeats the key.
  if (whole) return resolvePlaceholder(whole, scope);
  return renderTemplate(raw, scope, encodeAsText);
}

function renderBody(
  template: HttpRequestTemplate,
  scope: TemplateScope,
): { text: string; contentType: string } {
  if (typeof template.body === "string") {
    return { text: renderTemplate(template.body, scope, encodeForJsonText), contentType: "application/json" };
  }
  const value = renderJsonValue(template.body, scope);
  if (template.bodyType === "form") {
    const form = new URLSearchParams();
    for (const [key, item] of Object.entries(value as Record<string, unknown>))
      form.append(key, toText(item));
    return { text: form.toString(), contentType: "application/x-www-form-urlencoded" };
  }
  return { text: JSON.stringify(value), contentType: "application/json" };
}

async function sendWithTimeout(
  plan: HttpRequestPlan,
  ctx: ToolContext,
  options: HttpToolOptions,
  limits: { timeoutMs: number; allowPrivateNetwork: boolean; label: string },
): Promise<HttpResponse> {
  const timeout = AbortSignal.timeout(limits.timeoutMs);
  try {
    return await sendHttpRequest(plan, {
      signal: AbortSignal.any([ctx.signal, timeout]),
      allowPrivateNetwork: limits.allowPrivateNetwork,
      guard: options.guard ?? defaultGuardDeps,
      maxBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    });
  } catch (err) {
    const where = `${plan.method} ${plan.url.origin}${plan.url.pathname}`;
    if (timeout.aborted && !ctx.signal.aborted) {
      throw new DimsumError("timeout", `${where} did not answer within ${limits.timeoutMs} ms.`, {
        hint: "try again later, or raise timeoutMs in the tool definition",
      });
    }
    if (ctx.signal.aborted)
      throw new DimsumError("aborted", `${where} was cancelled because the run was aborted.`);
    if (err instanceof DimsumError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new DimsumError("tool_failed", `${where} failed: ${code ?? (err as Error).message}.`, {
      hint: "check that the service is reachable",
    });
  }
}

/** An error result for a non-2xx answer: status and a short excerpt of the body. */
function failureOf(response: HttpResponse, method: string, step?: string): ToolResult | undefined {
  if (response.status >= 200 && response.status < 300) return undefined;
  const excerpt = response.body.replace(/\s+/g, " ").trim().slice(0, ERROR_EXCERPT_CHARS);
  const what = step ? `The ${step} request (${method})` : `The ${method} request`;
  const more = response.body.length > ERROR_EXCERPT_CHARS ? "…" : "";
  const location = response.headers.location ? ` Redirected to ${response.headers.location}.` : "";
  return {
    content: `${what} failed with HTTP ${response.status} ${response.statusText}.${location}${excerpt ? ` Response: ${excerpt}${more}` : ""}`,
    isError: true,
    data: { status: response.status },
  };
}

function parseJsonBody(response: HttpResponse, what: string): unknown {
  const json = tryParseJson(response.body);
  if (json === undefined) {
    const why = response.truncated ? " (it was longer than the download limit)" : "";
    throw new DimsumError(
      "tool_failed",
      `The ${what} is not valid JSON${why}, so values cannot be extracted.`,
      {
        hint: "check the URL, or remove responseExtract to see the raw response",
      },
    );
  }
  return json;
}

function tryParseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Arguments with the top-level `default`s of the schema filled in (the registry validates, not fills). */
function withDefaults(
  schema: Record<string, unknown>,
  args: Record<string, unknown>,
): Record<string, unknown> {
  const out = { ...args };
  const properties = schema.properties;
  if (typeof properties !== "object" || properties === null) return out;
  for (const [name, property] of Object.entries(properties)) {
    if (
      out[name] === undefined &&
      typeof property === "object" &&
      property !== null &&
      "default" in property
    ) {
      out[name] = (property as { default: unknown }).default;
    }
  }
  return out;
}

function cap(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  return `${text.slice(0, maxChars)}\n[truncated: ${text.length - maxChars} more characters]`;
}

function redactResult(result: ToolResult, redact: Redactor): ToolResult {
  const content =
    typeof result.content === "string"
      ? redact(result.content)
      : result.content.map((part) => (part.type === "text" ? { ...part, text: redact(part.text) } : part));
  return { ...result, content };
}
