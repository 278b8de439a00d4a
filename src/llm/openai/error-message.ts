/** Error text and error values from Chat Completions error bodies, both HTTP bodies and in-stream payloads. */
import { DimsumError, type ErrorCode } from "../../errors.js";
import { asArray, asNumber, asRecord, asString, type JsonRecord } from "./json.js";

const maxTextChars = 300;

/** Pulls `error.message` (or `message`, or the trimmed text) out of an error response body. */
export function errorMessage(status: number, bodyText: string): string {
  const fromJson = messageFromJson(tryParse(bodyText));
  if (fromJson) return fromJson;
  const text = bodyText.trim();
  if (text === "") return `HTTP ${status} with an empty body`;
  return text.length > maxTextChars ? `${text.slice(0, maxTextChars)}…` : text;
}

/** Turns an `{"error": ...}` payload that arrived inside a stream into a DimsumError. */
export function streamError(payload: JsonRecord, provider: string): DimsumError {
  const err = asRecord(payload.error);
  const message = messageFromJson(payload) ?? "unknown error";
  const numeric = asNumber(err?.code) ?? asNumber(err?.status) ?? asNumber(payload.status);
  const kind = [asString(err?.type), asString(err?.code), asString(err?.status)].join(" ").toLowerCase();
  const code = classify(numeric, kind);
  return new DimsumError(code, `${provider} reported an error during the response: ${message}`, {
    hint: hints[code],
    retryable: code === "provider_unavailable" || code === "rate_limit",
    status: numeric,
  });
}

function classify(status: number | undefined, kind: string): ErrorCode {
  if (status === 401 || status === 403 || kind.includes("auth") || kind.includes("permission")) return "auth";
  if (status === 429 || kind.includes("rate_limit") || kind.includes("resource_exhausted"))
    return "rate_limit";
  if ((status !== undefined && status >= 400 && status < 500) || kind.includes("invalid_request")) {
    return "bad_request";
  }
  return "provider_unavailable";
}

const hints: Partial<Record<ErrorCode, string>> = {
  auth: "check the API key for this provider",
  rate_limit: "wait a moment and try again, or lower the request rate",
  bad_request: "the provider rejected the request; check the model id and options",
  provider_unavailable: "the provider failed mid-response; try again, or pick another model if it persists",
};

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

// Shapes seen: {error:{message}}, {error:"text"}, {message}, {detail} (vLLM/FastAPI), [{error:{...}}] (gateways).
function messageFromJson(value: unknown): string | undefined {
  const body = asRecord(asArray(value)?.[0]) ?? asRecord(value);
  if (!body) return undefined;
  const err = asRecord(body.error);
  const message =
    asString(err?.message) ?? asString(body.error) ?? asString(body.message) ?? asString(body.detail);
  if (!message) return undefined;
  // OpenRouter wraps the upstream provider's own error text in metadata.raw.
  const raw = asString(asRecord(err?.metadata)?.raw);
  const full = raw && !message.includes(raw) ? `${message}: ${raw}` : message;
  return full.length > maxTextChars ? `${full.slice(0, maxTextChars)}…` : full;
}
