/**
 * Classifies what went wrong in one HTTP attempt: whether a retry can help, the short reason a
 * `retry` event carries, and the DimsumError to report once retrying is over.
 */
import type { IncomingHttpHeaders } from "node:http";
import { DimsumError } from "../errors.js";
import type { ProtocolAdapter } from "./adapter.js";
import { LIMIT_LABELS, type LimitHit, limitConfigKey } from "./call-limits.js";
import type { TeardownCause } from "./http-post.js";
import { parseRetryAfter } from "./retry.js";
import type { ModelSpec } from "./types.js";

export interface AttemptFailure {
  retryable: boolean;
  /** Short cause for a `retry` event, e.g. "HTTP 503" or "connection refused". */
  reason: string;
  /** Delay the server asked for, if any. */
  retryAfterMs?: number;
  /** True for a reset on a pooled keep-alive socket: the server closed it while idle, so resend at once. */
  staleSocket?: boolean;
  /** The error to report after `attempts` requests. */
  toError(attempts: number): DimsumError;
}

/** `OPENAI_BASE_URL` for provider `openai`: the setting a user would fix when the host is wrong. */
export function baseUrlEnvName(model: ModelSpec): string {
  return `${model.provider.toUpperCase().replace(/[^A-Z0-9]+/g, "_")}_BASE_URL`;
}

function attemptsText(attempts: number): string {
  return attempts === 1 ? "1 attempt" : `${attempts} attempts`;
}

function keyHint(model: ModelSpec): string {
  return model.apiKeyEnv
    ? `set ${model.apiKeyEnv} to a valid key`
    : `check the API key configured for ${model.provider}`;
}

/** The API key is required but missing: fail before any request. */
export function missingKeyError(model: ModelSpec): DimsumError {
  return new DimsumError("config", `no API key for ${model.provider}: set ${model.apiKeyEnv}`, {
    hint: `export ${model.apiKeyEnv}=... or put it in your .env file`,
  });
}

/** The error that ends a call the caller aborted. */
export function abortedError(): DimsumError {
  return new DimsumError("aborted", "The model call was aborted.");
}

function fatal(error: DimsumError, reason: string): AttemptFailure {
  return { retryable: false, reason, toError: () => error };
}

/** Maps a non-2xx response to a failure; `bodyText` is the (truncated) error body. */
export function statusFailure(
  adapter: ProtocolAdapter,
  model: ModelSpec,
  status: number,
  headers: IncomingHttpHeaders,
  bodyText: string,
): AttemptFailure {
  const apiMessage = safeErrorMessage(adapter, status, bodyText);
  const who = model.provider;
  if (status === 401) {
    return fatal(
      new DimsumError("auth", `${who} rejected the API key (401): ${apiMessage}`, {
        hint: keyHint(model),
        status,
      }),
      "HTTP 401",
    );
  }
  if (status === 403) {
    return fatal(
      new DimsumError("auth", `${who} denied access (403): ${apiMessage}`, {
        hint: `${keyHint(model)}, one allowed to use model ${model.id}`,
        status,
      }),
      "HTTP 403",
    );
  }
  const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
  if (!retryable) {
    const hint =
      status === 404
        ? `check the model id "${model.id}" and the base URL ${model.baseUrl} (${baseUrlEnvName(model)})`
        : `the request for model ${model.id} was not accepted; check the options and messages sent`;
    return fatal(
      new DimsumError("bad_request", `${who} rejected the request (${status}): ${apiMessage}`, {
        hint,
        status,
      }),
      `HTTP ${status}`,
    );
  }
  const failure: AttemptFailure = {
    retryable: true,
    reason: status === 429 ? "rate limited (429)" : `HTTP ${status}`,
    toError(attempts) {
      if (status === 429) {
        return new DimsumError(
          "rate_limit",
          `${who} is rate limiting requests (429) after ${attemptsText(attempts)}: ${apiMessage}`,
          { hint: "wait a little, lower the request rate, or raise your quota", status, retryable: true },
        );
      }
      return new DimsumError(
        "provider_unavailable",
        `${who} failed with ${status} after ${attemptsText(attempts)}: ${apiMessage}`,
        { hint: "the provider is having trouble; try again later", status, retryable: true },
      );
    },
  };
  const retryAfterMs = parseRetryAfter(headers);
  if (retryAfterMs !== undefined) failure.retryAfterMs = retryAfterMs;
  return failure;
}

function safeErrorMessage(adapter: ProtocolAdapter, status: number, bodyText: string): string {
  try {
    const message = adapter.errorMessage(status, bodyText).trim();
    if (message !== "") return message;
  } catch {
    // An adapter that cannot read the body must not hide the status; fall through to the raw text.
  }
  const raw = bodyText.trim();
  return raw === "" ? "(empty response body)" : raw.slice(0, 500);
}

const RETRYABLE_NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "EAI_AGAIN",
  "ENOTFOUND",
  "UND_ERR_SOCKET",
]);

function errorCode(err: unknown): string | undefined {
  if (typeof err === "object" && err !== null && "code" in err && typeof err.code === "string")
    return err.code;
  return undefined;
}

/**
 * Maps a failure with no usable response (socket error, our timeout, abort) before any output.
 * `cause` is what we did ourselves; `reused` says the request went out on a pooled socket.
 */
export function networkFailure(
  model: ModelSpec,
  err: unknown,
  cause: TeardownCause | undefined,
  timeoutMs: number,
  reused: boolean,
): AttemptFailure {
  if (cause === "aborted") return fatal(abortedError(), "aborted");
  const url = model.baseUrl;
  const env = baseUrlEnvName(model);
  if (cause === "timeout") {
    return {
      retryable: true,
      reason: `no response within ${timeoutMs} ms`,
      toError: (attempts) =>
        new DimsumError(
          "timeout",
          `${model.provider} did not respond within ${timeoutMs} ms (${attemptsText(attempts)}) at ${url}`,
          { hint: "try again later, or raise the timeout", retryable: true, cause: err },
        ),
    };
  }
  const code = errorCode(err) ?? "";
  const detail = err instanceof Error ? err.message : String(err);
  if (code === "ECONNREFUSED") {
    return {
      retryable: true,
      reason: "connection refused",
      toError: (attempts) =>
        new DimsumError(
          "provider_unavailable",
          `cannot reach ${url} (connection refused, ${attemptsText(attempts)}) — is the server running / is ${env} right?`,
          { hint: `start the server or fix ${env}`, retryable: true, cause: err },
        ),
    };
  }
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") {
    return {
      retryable: true,
      reason: "DNS lookup failed",
      toError: (attempts) =>
        new DimsumError(
          "provider_unavailable",
          `cannot resolve the host of ${url} (DNS lookup failed, ${attemptsText(attempts)})`,
          { hint: `check ${env} and your network connection`, retryable: true, cause: err },
        ),
    };
  }
  const retryable = RETRYABLE_NETWORK_CODES.has(code) || detail === "aborted";
  return {
    retryable,
    reason: code === "" ? detail : `connection error (${code})`,
    staleSocket: reused && code === "ECONNRESET",
    toError: (attempts) =>
      new DimsumError(
        "provider_unavailable",
        `connection to ${url} failed after ${attemptsText(attempts)}: ${detail}${code && !detail.includes(code) ? ` (${code})` : ""}`,
        { hint: `check ${env} and your network connection`, retryable, cause: err },
      ),
  };
}

/** The connection broke after output was delivered; retrying would repeat that output, so it is final. */
export function midStreamFailure(
  model: ModelSpec,
  err: unknown,
  cause: TeardownCause | undefined,
  timeoutMs: number,
): DimsumError {
  if (cause === "aborted") return abortedError();
  const detail = err instanceof Error ? err.message : String(err);
  if (cause === "timeout") {
    return new DimsumError(
      "timeout",
      `${model.provider} stopped sending mid-response (nothing for ${timeoutMs} ms)`,
      {
        hint: "the partial answer was kept; try again, or raise the timeout",
        cause: err,
      },
    );
  }
  return new DimsumError(
    "provider_unavailable",
    `the connection to ${model.baseUrl} dropped mid-response (${detail}); not retried, to avoid repeating output`,
    { hint: "try the request again", cause: err },
  );
}

function limitHint(hit: LimitHit): string {
  return `raise ${limitConfigKey(hit.name)} (now ${hit.ms} ms) in the config file`;
}

/** An attempt one of our own deadlines ended before any output was delivered. */
export function limitFailure(model: ModelSpec, hit: LimitHit): AttemptFailure {
  const who = model.provider;
  const label = LIMIT_LABELS[hit.name];
  if (hit.name === "callMs" || hit.name === "retryBudgetMs") {
    // Nothing is left of the call's time: retrying cannot help.
    return {
      retryable: false,
      reason: `${label} of ${hit.ms} ms reached`,
      toError: (attempts) =>
        new DimsumError(
          "timeout",
          `${who} gave no answer within the ${label} of ${hit.ms} ms (${attemptsText(attempts)}) at ${model.baseUrl}`,
          { hint: `try again later, or ${limitHint(hit)}`, retryable: true },
        ),
    };
  }
  const what = hit.name === "firstByteMs" ? `no data within ${hit.ms} ms` : `no data for ${hit.ms} ms`;
  return {
    retryable: true,
    reason: `${what} (${label})`,
    toError: (attempts) =>
      new DimsumError(
        "timeout",
        `${who} sent ${what} (${label}, ${attemptsText(attempts)}) at ${model.baseUrl}`,
        { hint: `try again later, or ${limitHint(hit)}`, retryable: true },
      ),
  };
}

/** One of our deadlines ended a response after output was delivered; it is final, the partial answer kept. */
export function limitMidStreamError(model: ModelSpec, hit: LimitHit): DimsumError {
  const label = LIMIT_LABELS[hit.name];
  const message =
    hit.name === "idleMs"
      ? `${model.provider} stopped sending mid-response: no data for ${hit.ms} ms (${label}; keep-alive pings do not count)`
      : `${model.provider} was still answering at the ${label} of ${hit.ms} ms`;
  return new DimsumError("timeout", message, {
    hint: `the partial answer was kept; try again, or ${limitHint(hit)}`,
  });
}

/** Retrying was cut short because the next attempt would start past a deadline. */
export function retryStoppedError(last: DimsumError, hit: LimitHit): DimsumError {
  return new DimsumError(
    last.code,
    `${last.message}; no more retries within the ${LIMIT_LABELS[hit.name]} of ${hit.ms} ms`,
    {
      hint: last.hint ? `${last.hint}; or ${limitHint(hit)}` : limitHint(hit),
      ...(last.status === undefined ? {} : { status: last.status }),
      retryable: last.retryable,
      cause: last.cause,
    },
  );
}

/**
 * How a model chain treats a call's final error: `retryable` (429, 5xx, overload, a stalled stream, a
 * call limit; the retries were spent) and `auth` / `billing` move to the next model, the last two
 * cooling the provider down longer; undefined for errors another model would not fix (a bad request, an abort).
 */
export type FallbackClass = "retryable" | "auth" | "billing";

const BILLING_TEXT =
  /insufficient[_ ]quota|billing|credit balance|payment required|exceeded your current quota|arrearage/i;

export function fallbackClassOf(error: DimsumError): FallbackClass | undefined {
  if (error.status === 402 || BILLING_TEXT.test(error.message)) return "billing";
  switch (error.code) {
    case "auth":
      return "auth";
    case "rate_limit":
    case "provider_unavailable":
    case "timeout":
      return "retryable";
    default:
      return undefined;
  }
}

/** A request URL built from a model's base URL; a config error naming the setting when it is not http(s). */
export function modelUrl(model: ModelSpec, text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch (err) {
    throw new DimsumError("config", `invalid base URL for ${model.provider}: ${model.baseUrl}`, {
      hint: `set ${baseUrlEnvName(model)} to a URL such as https://host/v1`,
      cause: err,
    });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new DimsumError("config", `base URL for ${model.provider} must be http(s): ${model.baseUrl}`, {
      hint: `fix ${baseUrlEnvName(model)}`,
    });
  }
  return url;
}
