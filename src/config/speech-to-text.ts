/**
 * The speech-to-text endpoint voice messages from external chats are transcribed with, resolved once
 * at the edge: the `DIMSUM_STT_*` variables over the config file's `speechToText`. Undefined (voice
 * messages without the platform's own text are said unread) unless a base URL is set.
 */
import { DimsumError } from "../errors.js";
import type { ConfigFile } from "./config-file.js";
import type { EnvMap } from "./env.js";

/** An OpenAI-compatible `POST {baseUrl}/audio/transcriptions` (OpenAI, Groq, SiliconFlow, whisper servers). */
export interface SpeechToTextConfig {
  /** E.g. `https://api.openai.com/v1`; `/audio/transcriptions` is appended. */
  baseUrl: string;
  /** `whisper-1` unless set (`whisper-large-v3` on Groq, `FunAudioLLM/SenseVoiceSmall` on SiliconFlow). */
  model: string;
  /** Sent as `Authorization: Bearer …`; local servers may need none. Never logged. */
  apiKey: string | undefined;
  /** ISO-639-1 hint (`zh`, `en`); the endpoint detects the language when unset. */
  language: string | undefined;
}

export const DEFAULT_STT_MODEL = "whisper-1";

/** The endpoint, or undefined when no base URL is configured. Throws DimsumError('config') on a bad URL. */
export function speechToTextConfigFrom(env: EnvMap, file: ConfigFile): SpeechToTextConfig | undefined {
  const entry = file.speechToText;
  const baseUrl = env.DIMSUM_STT_BASE_URL?.trim() || entry?.baseUrl;
  if (!baseUrl) return undefined;
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    url = new URL("invalid:");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    const setting = env.DIMSUM_STT_BASE_URL?.trim() ? "DIMSUM_STT_BASE_URL" : "speechToText.baseUrl";
    throw new DimsumError("config", `${setting} "${baseUrl}" is not an http(s) URL`, {
      hint: `set ${setting} to the endpoint's base URL, e.g. https://api.openai.com/v1`,
    });
  }
  const keyVariable = entry?.apiKeyEnv;
  const apiKey = env.DIMSUM_STT_API_KEY?.trim() || (keyVariable ? env[keyVariable]?.trim() : undefined);
  return {
    baseUrl: baseUrl.replace(/\/+$/, ""),
    model: env.DIMSUM_STT_MODEL?.trim() || entry?.model || DEFAULT_STT_MODEL,
    apiKey: apiKey || undefined,
    language: env.DIMSUM_STT_LANGUAGE?.trim() || entry?.language || undefined,
  };
}
