/**
 * A model of the providers' prompt caches for the fake LLM server, so tests and benchmarks can see
 * what a request order is worth. Tokens are estimated as 4 characters each over the request's
 * serialized prefix (tools, system, messages, in the order the provider reads them).
 * - `openai` (also used for Gemini): the longest prefix shared with an earlier request of the same
 *   `prompt_cache_key`, counted in 128-token blocks beyond the first 1,024; nothing under 1,024.
 * - `anthropic`: the prefix up to the last `cache_control` breakpoint whose prefix an earlier request
 *   wrote (every breakpoint prefix of 1,024 tokens or more is written); what lies between the read
 *   point and the last breakpoint is written now.
 */

/** Characters per token of the estimate. */
const CHARS_PER_TOKEN = 4;
const MIN_CACHED_TOKENS = 1024;
const OPENAI_BLOCK = 128;

export interface CacheUsage {
  /** Every input token of the request. */
  input: number;
  cached: number;
  /** Tokens written to the cache (Anthropic only). */
  written: number;
}

type Json = Record<string, unknown>;

function tokens(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/** A JSON text without the `cache_control` markers (they do not change what is cached). */
function plain(value: unknown): string {
  return JSON.stringify(value, (key, v: unknown) => (key === "cache_control" ? undefined : v));
}

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

function arrayOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** One fake account's caches, for all three protocols. */
export class FakePromptCache {
  /** Earlier serialized requests by cache key (OpenAI-style automatic caching). */
  readonly #prefixes = new Map<string, string[]>();
  /** Anthropic: prefixes written at breakpoints. */
  readonly #written = new Set<string>();

  /** The cache usage of one request body of `protocol`, remembering it for the next ones. */
  observe(protocol: "openai" | "anthropic" | "gemini", body: unknown): CacheUsage {
    const json = (body ?? {}) as Json;
    return protocol === "anthropic" ? this.#anthropic(json) : this.#automatic(protocol, json);
  }

  #automatic(protocol: "openai" | "gemini", body: Json): CacheUsage {
    const parts =
      protocol === "openai"
        ? [plain(body.tools ?? []), ...arrayOf(body.messages).map(plain)]
        : [
            plain(body.tools ?? []),
            plain(body.systemInstruction ?? null),
            ...arrayOf(body.contents).map(plain),
          ];
    const text = parts.join("\n");
    const key = typeof body.prompt_cache_key === "string" ? body.prompt_cache_key : "";
    const earlier = this.#prefixes.get(key) ?? [];
    let shared = 0;
    for (const previous of earlier) shared = Math.max(shared, commonPrefix(previous, text));
    earlier.push(text);
    this.#prefixes.set(key, earlier);
    const input = tokens(text.length);
    const sharedTokens = Math.min(Math.floor(shared / CHARS_PER_TOKEN), input);
    const cached =
      sharedTokens < MIN_CACHED_TOKENS
        ? 0
        : MIN_CACHED_TOKENS + Math.floor((sharedTokens - MIN_CACHED_TOKENS) / OPENAI_BLOCK) * OPENAI_BLOCK;
    return { input, cached, written: 0 };
  }

  #anthropic(body: Json): CacheUsage {
    // The blocks in the order the API reads them, and which carry a breakpoint.
    const blocks: Array<{ text: string; breakpoint: boolean }> = [];
    const add = (block: unknown) => {
      const marked = typeof block === "object" && block !== null && "cache_control" in block;
      blocks.push({ text: plain(block), breakpoint: marked });
    };
    for (const tool of arrayOf(body.tools)) add(tool);
    if (typeof body.system === "string") add({ type: "text", text: body.system });
    else for (const block of arrayOf(body.system)) add(block);
    for (const message of arrayOf(body.messages)) {
      const m = message as Json;
      const content =
        typeof m.content === "string" ? [{ type: "text", text: m.content }] : arrayOf(m.content);
      blocks.push({ text: `\n${String(m.role)}:`, breakpoint: false });
      for (const block of content) add(block);
    }
    let prefix = "";
    const breakpoints: string[] = [];
    for (const block of blocks) {
      prefix += block.text;
      if (block.breakpoint) breakpoints.push(prefix);
    }
    const input = tokens(prefix.length);
    let read = 0;
    let readAt = -1;
    for (let i = breakpoints.length - 1; i >= 0; i--) {
      const candidate = breakpoints[i] ?? "";
      if (this.#written.has(candidate)) {
        read = tokens(candidate.length);
        readAt = i;
        break;
      }
    }
    let written = 0;
    for (let i = readAt + 1; i < breakpoints.length; i++) {
      const candidate = breakpoints[i] ?? "";
      if (tokens(candidate.length) < MIN_CACHED_TOKENS) continue;
      this.#written.add(candidate);
    }
    const last = breakpoints.at(-1);
    if (last !== undefined && breakpoints.length - 1 > readAt && tokens(last.length) >= MIN_CACHED_TOKENS) {
      written = tokens(last.length) - read;
    }
    return { input, cached: read, written };
  }
}
