/** Anthropic error bodies and in-stream `error` events, translated into Dimsum errors. */
import { DimsumError, type ErrorCode } from "../../errors.js";

const CODE_BY_TYPE: Record<string, ErrorCode> = {
  overloaded_error: "provider_unavailable",
  api_error: "provider_unavailable",
  rate_limit_error: "rate_limit",
  authentication_error: "auth",
  permission_error: "auth",
  invalid_request_error: "bad_request",
  not_found_error: "bad_request",
  request_too_large: "bad_request",
};

const HINT_BY_CODE: Partial<Record<ErrorCode, string>> = {
  provider_unavailable: "Anthropic is overloaded or failing; retry in a moment.",
  rate_limit: "Slow down or raise the rate limit of your Anthropic organisation.",
  auth: "Check the Anthropic API key and its permissions.",
  bad_request: "The request was rejected; check the model id, max tokens and message history.",
};

/** The `error` object of an Anthropic error body, if the text is one. */
function parseErrorObject(bodyText: string): { type?: string; message?: string } | undefined {
  try {
    const parsed = JSON.parse(bodyText) as { error?: { type?: unknown; message?: unknown } } | null;
    const error = parsed?.error;
    if (!error || typeof error !== "object") return undefined;
    return {
      type: typeof error.type === "string" ? error.type : undefined,
      message: typeof error.message === "string" ? error.message : undefined,
    };
  } catch {
    return undefined;
  }
}

/** Pulls the API's message out of an error response body (`{type:'error', error:{type, message}}`). */
export function anthropicErrorMessage(status: number, bodyText: string): string {
  const error = parseErrorObject(bodyText);
  if (error?.message) return error.type ? `${error.message} (${error.type})` : error.message;
  const text = bodyText.trim();
  if (text === "") return `Anthropic returned HTTP ${status} with an empty body.`;
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

/** Turns an in-stream `{type:'error', error:{type, message}}` event into a DimsumError. */
export function anthropicStreamError(error: { type?: string; message?: string } | undefined): DimsumError {
  const type = error?.type ?? "unknown_error";
  const code = CODE_BY_TYPE[type] ?? "provider_unavailable";
  const message = `Anthropic stream failed with ${type}: ${error?.message ?? "no message given"}`;
  return new DimsumError(code, message, {
    hint: HINT_BY_CODE[code],
    retryable: code === "provider_unavailable" || code === "rate_limit",
  });
}
