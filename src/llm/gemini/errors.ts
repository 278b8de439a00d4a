/** Gemini error bodies and in-stream error payloads, translated into Dimsum errors. */
import { DimsumError, type ErrorCode } from "../../errors.js";

interface GeminiErrorObject {
  code?: number;
  message?: string;
  status?: string;
}

const CODE_BY_STATUS: Record<string, ErrorCode> = {
  RESOURCE_EXHAUSTED: "rate_limit",
  UNAUTHENTICATED: "auth",
  PERMISSION_DENIED: "auth",
  INVALID_ARGUMENT: "bad_request",
  FAILED_PRECONDITION: "bad_request",
  NOT_FOUND: "bad_request",
  OUT_OF_RANGE: "bad_request",
  DEADLINE_EXCEEDED: "timeout",
  UNAVAILABLE: "provider_unavailable",
  INTERNAL: "provider_unavailable",
};

const HINT_BY_CODE: Partial<Record<ErrorCode, string>> = {
  provider_unavailable: "Gemini is overloaded or failing; retry in a moment.",
  rate_limit: "Slow down, or raise the quota of the Google Cloud project behind the key.",
  auth: "Check the Gemini API key and that the Generative Language API is enabled for it.",
  bad_request: "The request was rejected; check the model id, tool schemas and message history.",
  timeout: "The model took too long; retry, or ask for a shorter answer.",
};

function codeFor(error: GeminiErrorObject): ErrorCode {
  const byStatus = error.status ? CODE_BY_STATUS[error.status] : undefined;
  if (byStatus) return byStatus;
  const http = error.code ?? 0;
  if (http === 429) return "rate_limit";
  if (http === 401 || http === 403) return "auth";
  if (http >= 400 && http < 500) return "bad_request";
  return "provider_unavailable";
}

/** The `error` object of a Gemini error body; the API sometimes wraps the body in an array. */
function parseErrorObject(bodyText: string): GeminiErrorObject | undefined {
  try {
    const parsed = JSON.parse(bodyText) as unknown;
    const first: unknown = Array.isArray(parsed) ? parsed[0] : parsed;
    const error = (first as { error?: unknown } | null)?.error;
    return error !== null && typeof error === "object" ? (error as GeminiErrorObject) : undefined;
  } catch {
    return undefined;
  }
}

/** Pulls the API's message out of an error response body (`{error:{code, message, status}}`). */
export function geminiErrorMessage(status: number, bodyText: string): string {
  const error = parseErrorObject(bodyText);
  if (typeof error?.message === "string" && error.message !== "") {
    return typeof error.status === "string" ? `${error.message} (${error.status})` : error.message;
  }
  const text = bodyText.trim();
  if (text === "") return `Gemini returned HTTP ${status} with an empty body.`;
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

/** Turns an in-stream `{error:{code, message, status}}` payload into a DimsumError. */
export function geminiStreamError(error: GeminiErrorObject): DimsumError {
  const code = codeFor(error);
  const label = error.status ?? (error.code === undefined ? "an error" : `HTTP ${error.code}`);
  return new DimsumError(code, `Gemini stream failed with ${label}: ${error.message ?? "no message given"}`, {
    hint: HINT_BY_CODE[code],
    status: error.code,
    retryable: code === "provider_unavailable" || code === "rate_limit" || code === "timeout",
  });
}
