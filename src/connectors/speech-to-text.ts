/**
 * Transcribes audio with an OpenAI-compatible speech-to-text endpoint: `POST {baseUrl}/audio/transcriptions`,
 * multipart with `file`, `model` (and `language`, `response_format=json`), answered `{text}`. Failures are
 * DeliveryErrors (network, 5xx, 408, 429: retryable) that never carry the API key or the URL's query.
 */
import type { SpeechToTextConfig } from "../config/speech-to-text.js";
import { bodyExcerpt, retryableStatus } from "./http-json.js";
import { DeliveryError } from "./types.js";

/** What one upload may weigh: OpenAI's and Groq's limit of a transcription request. */
export const MAX_AUDIO_BYTES = 25 * 1024 * 1024;
const TIMEOUT_MS = 120_000;

/** The transcript of one audio file (trimmed; empty when the endpoint heard no words). */
export async function transcribeAudio(
  config: SpeechToTextConfig,
  audio: { name: string; data: Buffer; contentType?: string },
  signal: AbortSignal,
): Promise<string> {
  const form = new FormData();
  // A copy on its own ArrayBuffer (a Buffer may sit in a shared pool).
  const bytes = new Uint8Array(audio.data);
  form.append(
    "file",
    new Blob([bytes], { type: audio.contentType ?? "application/octet-stream" }),
    audio.name,
  );
  form.append("model", config.model);
  form.append("response_format", "json");
  if (config.language) form.append("language", config.language);
  const headers: Record<string, string> = { accept: "application/json" };
  if (config.apiKey) headers.authorization = `Bearer ${config.apiKey}`;
  const host = new URL(config.baseUrl).host;
  let response: Response;
  let text: string;
  try {
    response = await fetch(`${config.baseUrl}/audio/transcriptions`, {
      method: "POST",
      headers,
      body: form,
      signal: AbortSignal.any([signal, AbortSignal.timeout(TIMEOUT_MS)]),
    });
    text = await response.text();
  } catch (err) {
    if (signal.aborted) throw err;
    const timedOut = err instanceof Error && err.name === "TimeoutError";
    throw new DeliveryError(
      `the speech-to-text endpoint ${host} ${timedOut ? "timed out" : "is unreachable"}`,
      {
        retryable: true,
      },
    );
  }
  let body: unknown = text;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    // A plain-text answer (some servers ignore response_format) or a proxy's error page.
  }
  if (!response.ok) {
    const excerpt = redact(bodyExcerpt(body), config.apiKey);
    const hint = response.status === 401 || response.status === 403 ? " (check DIMSUM_STT_API_KEY)" : "";
    throw new DeliveryError(
      `the speech-to-text endpoint ${host} refused (HTTP ${response.status}: ${excerpt})${hint}`,
      {
        retryable: retryableStatus(response.status),
      },
    );
  }
  if (typeof body === "object" && body !== null && typeof (body as { text?: unknown }).text === "string") {
    return (body as { text: string }).text.trim();
  }
  if (typeof body === "string") return body.trim();
  throw new DeliveryError(`the speech-to-text endpoint ${host} answered without a text field`, {
    retryable: false,
  });
}

/** An error body may echo the key back (some proxies do): it never reaches a chat or a log. */
function redact(text: string, key: string | undefined): string {
  return key ? text.split(key).join("[key]") : text;
}
