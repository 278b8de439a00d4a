/**
 * Asks a provider which models it serves: `GET /models` of OpenAI-compatible APIs (OpenAI, DeepSeek,
 * Qwen, Kimi, GLM, OpenRouter, Ollama), Anthropic's `GET /v1/models`, Gemini's `GET /v1beta/models`.
 * Time-boxed; errors name the provider and the status, never the key.
 */
import { DimsumError } from "../errors.js";
import type { ModelSpec } from "./types.js";

export type ModelListTarget = Pick<ModelSpec, "protocol" | "baseUrl" | "apiKey" | "headers">;

function versioned(base: string, pattern: RegExp, version: string): string {
  const trimmed = base.replace(/\/+$/, "");
  return pattern.test(trimmed) ? trimmed : `${trimmed}/${version}`;
}

function request(target: ModelListTarget): { url: string; headers: Record<string, string> } {
  const headers: Record<string, string> = { accept: "application/json", ...target.headers };
  switch (target.protocol) {
    case "anthropic":
      if (target.apiKey) headers["x-api-key"] = target.apiKey;
      headers["anthropic-version"] = "2023-06-01";
      return { url: `${versioned(target.baseUrl, /\/v1$/, "v1")}/models?limit=1000`, headers };
    case "gemini":
      if (target.apiKey) headers["x-goog-api-key"] = target.apiKey;
      return {
        url: `${versioned(target.baseUrl, /\/v1(alpha|beta)?$/, "v1beta")}/models?pageSize=1000`,
        headers,
      };
    default:
      if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
      return { url: `${target.baseUrl.replace(/\/+$/, "")}/models`, headers };
  }
}

interface ListBody {
  data?: Array<{ id?: unknown }>;
  models?: Array<{ name?: unknown; supportedGenerationMethods?: unknown }>;
}

function idsOf(body: ListBody): string[] {
  const ids: string[] = [];
  for (const entry of body.data ?? []) if (typeof entry.id === "string") ids.push(entry.id);
  for (const entry of body.models ?? []) {
    const methods = entry.supportedGenerationMethods;
    // Gemini lists embedding models too; keep those that can answer.
    if (Array.isArray(methods) && !methods.includes("generateContent")) continue;
    if (typeof entry.name === "string") ids.push(entry.name.replace(/^models\//, ""));
  }
  return [...new Set(ids)].sort();
}

/** The model ids the provider lists; throws a DimsumError when it cannot be asked. */
export async function listProviderModels(
  provider: string,
  target: ModelListTarget,
  options: { timeoutMs?: number; fetch?: typeof fetch } = {},
): Promise<string[]> {
  const { url, headers } = request(target);
  const fetchFn = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 3000;
  let response: Response;
  try {
    response = await fetchFn(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
    throw new DimsumError(
      timedOut ? "timeout" : "provider_unavailable",
      timedOut
        ? `${provider} did not list its models within ${timeoutMs / 1000} s`
        : `${provider} could not be reached to list its models`,
      { hint: "check the provider's base URL and that it is running" },
    );
  }
  if (!response.ok) {
    await response.body?.cancel();
    const auth = response.status === 401 || response.status === 403;
    throw new DimsumError(
      auth ? "auth" : "provider_unavailable",
      `${provider} answered ${response.status} when asked for its models`,
      auth ? { hint: "check the provider's API key" } : {},
    );
  }
  try {
    return idsOf((await response.json()) as ListBody);
  } catch {
    throw new DimsumError("bad_request", `${provider} sent a model list that is not JSON`);
  }
}
