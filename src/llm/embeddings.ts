/**
 * Text embeddings over HTTP: OpenAI-compatible `POST {baseUrl}/embeddings` (OpenAI, Ollama's `/v1`,
 * vLLM, DashScope, ...) and Gemini `batchEmbedContents`. Inputs go in batches; each batch is retried
 * like a model call (429/5xx/network, honouring Retry-After), which is safe because embedding is
 * idempotent. Unlike `stream`, this throws a DimsumError when it gives up.
 */
import type { IncomingMessage } from "node:http";
import { abortableSleep } from "../shared/abortable-sleep.js";
import type { ProtocolAdapter } from "./adapter.js";
import { buildEmbeddingRequest, type EmbeddingRequest, parseEmbeddingResponse } from "./embeddings/wire.js";
import { geminiAdapter } from "./gemini/index.js";
import { readBodyText, sendPost } from "./http-post.js";
import { openaiAdapter } from "./openai/adapter.js";
import { resolveRetryPolicy, retryDelayMs } from "./retry.js";
import {
  type AttemptFailure,
  abortedError,
  missingKeyError,
  modelUrl,
  networkFailure,
  statusFailure,
} from "./transport-errors.js";
import type { ModelSpec, RetryPolicy } from "./types.js";

export const DEFAULT_EMBED_TIMEOUT_MS = 30_000;
export const DEFAULT_EMBED_BATCH_SIZE = 64;
const MAX_RESPONSE_BYTES = 256 * 1024 * 1024;

export interface EmbedOptions {
  signal?: AbortSignal;
  /** Socket inactivity limit per attempt (default 30 s). */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Ask for shorter vectors where the model supports it (OpenAI text-embedding-3, Gemini). */
  dimensions?: number;
  /** Inputs per request (default 64; Gemini accepts at most 100). */
  batchSize?: number;
  /** Injectable time, so retry tests need not wait. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
}

type Attempt = { ok: true; bodyText: string } | { ok: false; failure: AttemptFailure };

/** Embeds every text with `model`; vectors come back in input order. Throws DimsumError on failure. */
export async function embed(
  model: ModelSpec,
  texts: string[],
  options: EmbedOptions = {},
): Promise<Float32Array[]> {
  if (texts.length === 0) return [];
  if (model.apiKeyEnv && !model.apiKey) throw missingKeyError(model);
  const batchSize = Math.max(1, Math.floor(options.batchSize ?? DEFAULT_EMBED_BATCH_SIZE));
  const out: Float32Array[] = [];
  for (let start = 0; start < texts.length; start += batchSize) {
    const batch = texts.slice(start, start + batchSize);
    out.push(...(await embedBatch(model, batch, options)));
  }
  return out;
}

async function embedBatch(model: ModelSpec, texts: string[], options: EmbedOptions): Promise<Float32Array[]> {
  const request = buildEmbeddingRequest(model, texts, options.dimensions);
  const url = modelUrl(model, request.url);
  const policy = resolveRetryPolicy(options.retry);
  const sleep = options.sleep ?? abortableSleep;
  const random = options.random ?? Math.random;
  const timeoutMs = options.timeoutMs ?? DEFAULT_EMBED_TIMEOUT_MS;
  let resentStale = false;
  for (let attempt = 1; ; attempt++) {
    if (options.signal?.aborted) throw abortedError();
    const result = await attemptOnce(model, url, request, options.signal, timeoutMs);
    if (result.ok) return parseEmbeddingResponse(model, result.bodyText, texts.length);
    const { failure } = result;
    if (failure.staleSocket && !resentStale) {
      // The server closed a pooled keep-alive socket while it was idle: resend at once, uncounted.
      resentStale = true;
      attempt--;
      continue;
    }
    if (!failure.retryable || attempt > policy.maxRetries) throw failure.toError(attempt);
    await sleep(retryDelayMs(attempt, policy, random, failure.retryAfterMs), options.signal);
  }
}

function adapterFor(model: ModelSpec): ProtocolAdapter {
  return model.protocol === "gemini" ? geminiAdapter : openaiAdapter;
}

async function attemptOnce(
  model: ModelSpec,
  url: URL,
  request: EmbeddingRequest,
  signal: AbortSignal | undefined,
  timeoutMs: number,
): Promise<Attempt> {
  const headers = { ...request.headers, "content-length": String(Buffer.byteLength(request.body)) };
  const post = sendPost(url, headers, request.body, { signal, timeoutMs });
  try {
    let res: IncomingMessage;
    try {
      res = await post.response;
    } catch (err) {
      return { ok: false, failure: networkFailure(model, err, post.cause, timeoutMs, post.reusedSocket) };
    }
    const status = res.statusCode ?? 0;
    try {
      if (status < 200 || status >= 300) {
        const bodyText = await readBodyText(res);
        return { ok: false, failure: statusFailure(adapterFor(model), model, status, res.headers, bodyText) };
      }
      return { ok: true, bodyText: await readBodyText(res, MAX_RESPONSE_BYTES) };
    } catch (err) {
      // The body broke off; embedding is idempotent, so this is as retryable as a failed connect.
      return { ok: false, failure: networkFailure(model, err, post.cause, timeoutMs, false) };
    }
  } finally {
    post.release();
  }
}
