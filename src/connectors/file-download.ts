/**
 * Downloads of files people sent in external chats, bounded: reading stops as soon as a file grows
 * past the limit, so an oversized file never sits in memory whole. Failures are DeliveryErrors
 * sorted like the other platform calls (network, 5xx, 408, 429: retry later) and never name the URL,
 * which carries the bot token on some platforms.
 */
import { retryableStatus } from "./http-json.js";
import { DeliveryError } from "./types.js";

const DEFAULT_TIMEOUT_MS = 60_000;

/** A file grew past the bytes the caller would take. */
export class FileTooLargeError extends Error {
  readonly maxBytes: number;

  constructor(maxBytes: number) {
    super(`the file is larger than ${maxBytes} bytes`);
    this.name = "FileTooLargeError";
    this.maxBytes = maxBytes;
  }
}

/** Reads chunks into one buffer; throws FileTooLargeError once they pass `maxBytes`. */
export async function readCapped(chunks: AsyncIterable<Uint8Array>, maxBytes: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let total = 0;
  for await (const chunk of chunks) {
    total += chunk.byteLength;
    if (total > maxBytes) throw new FileTooLargeError(maxBytes);
    parts.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  }
  return Buffer.concat(parts, total);
}

/**
 * GETs a file with `fetch`, at most `maxBytes`. `what` names it in errors ("Telegram file download"):
 * the URL is never shown.
 */
export async function downloadFile(
  url: string,
  options: { what: string; maxBytes: number; signal: AbortSignal; headers?: Record<string, string> },
): Promise<Buffer> {
  const signal = AbortSignal.any([options.signal, AbortSignal.timeout(DEFAULT_TIMEOUT_MS)]);
  let response: Response;
  try {
    response = await fetch(url, { headers: options.headers ?? {}, signal });
  } catch (err) {
    if (options.signal.aborted) throw err;
    throw new DeliveryError(`${options.what} failed: ${reasonOf(err)}`, { retryable: true });
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel().catch(() => undefined);
    throw new DeliveryError(`${options.what} failed (HTTP ${response.status})`, {
      retryable: retryableStatus(response.status),
    });
  }
  const length = Number(response.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(length) && length > options.maxBytes) {
    await response.body.cancel().catch(() => undefined);
    throw new FileTooLargeError(options.maxBytes);
  }
  try {
    return await readCapped(chunksOf(response.body), options.maxBytes);
  } catch (err) {
    if (err instanceof FileTooLargeError || options.signal.aborted) throw err;
    throw new DeliveryError(`${options.what} failed: ${reasonOf(err)}`, { retryable: true });
  }
}

/** The chunks of a web stream; leaving early cancels it (the rest is not downloaded). */
async function* chunksOf(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** A short cause without the URL (fetch errors keep it out of their message; their cause has the code). */
function reasonOf(err: unknown): string {
  if (err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError")) return "timed out";
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === "string" ? code : "the connection failed";
}
