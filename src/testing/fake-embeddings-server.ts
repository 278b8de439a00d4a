/**
 * A fake embeddings API on 127.0.0.1: OpenAI-compatible `POST .../embeddings` and Gemini
 * `POST .../models/{id}:batchEmbedContents` (and `:embedContent`), answering with `hashEmbedding`,
 * a deterministic offline embedding. Tests queue failures (429 with Retry-After, 500) and read the
 * request log; benchmarks use `hashEmbedding` directly.
 */
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import { STOPWORDS } from "../store/text/stopwords.js";
import { listenOnLoopback } from "./listen-on-loopback.js";

const CJK = /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}]/u;
const TOKEN = /[\p{L}\p{N}]+/gu;

/** 32-bit FNV-1a of a string's UTF-16 units. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function addFeature(vector: Float32Array, feature: string, weight: number): void {
  const h = fnv1a(feature);
  const index = h % vector.length;
  // A second, independent bit picks the sign, so colliding features cancel instead of piling up.
  const sign = fnv1a(`#${feature}`) & 1 ? 1 : -1;
  vector[index] = vector[index]! + sign * weight;
}

/**
 * A deterministic L2-normalised "embedding" from hashed features: whole words, character trigrams
 * of each word (so "prefers" and "preference" overlap), and CJK characters and bigrams; English
 * function words are skipped. Texts that share words and word pieces get a high cosine; it knows
 * nothing of synonyms.
 */
export function hashEmbedding(text: string, dims = 256): Float32Array {
  const vector = new Float32Array(Math.max(1, Math.floor(dims)));
  const normalized = text.normalize("NFKC").toLowerCase();
  for (const match of normalized.matchAll(TOKEN)) {
    const token = match[0];
    const chars = Array.from(token);
    if (CJK.test(token)) {
      for (let i = 0; i < chars.length; i++) {
        addFeature(vector, `c:${chars[i]}`, 0.5);
        if (i + 1 < chars.length) addFeature(vector, `b:${chars[i]}${chars[i + 1]}`, 1);
      }
      continue;
    }
    // Function words would dominate every vector and make unrelated texts look alike.
    if (STOPWORDS.has(token)) continue;
    addFeature(vector, `w:${token}`, 1);
    const padded = `^${token}$`;
    const units = Array.from(padded);
    for (let i = 0; i + 3 <= units.length; i++)
      addFeature(vector, `t:${units.slice(i, i + 3).join("")}`, 0.4);
  }
  let sum = 0;
  for (const x of vector) sum += x * x;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i] = vector[i]! / norm;
  return vector;
}

export interface RecordedEmbeddingRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  protocol: "openai" | "gemini" | "unknown";
  /** How many texts the request asked to embed. */
  inputs: number;
}

export interface FakeFailure {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface FakeEmbeddingsServerOptions {
  /** Vector length when the request does not ask for one (default 64). */
  dims?: number;
}

export interface FakeEmbeddingsServer {
  url: string;
  port: number;
  requests: RecordedEmbeddingRequest[];
  /** The next `times` requests (default 1) fail with this status. */
  failNext(failure: FakeFailure, times?: number): void;
  close(): Promise<void>;
}

const GEMINI_PATH = /\/models\/([^/:]+):(batchEmbedContents|embedContent)$/;

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString("utf8");
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

type Json = Record<string, unknown>;

function asRecord(value: unknown): Json {
  return typeof value === "object" && value !== null ? (value as Json) : {};
}

function geminiText(content: unknown): string {
  const parts = asRecord(content).parts;
  if (!Array.isArray(parts)) return "";
  return parts.map((p) => String(asRecord(p).text ?? "")).join("");
}

function positive(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : fallback;
}

/** Starts the server on a free port of 127.0.0.1. */
export async function startFakeEmbeddingsServer(
  options: FakeEmbeddingsServerOptions = {},
): Promise<FakeEmbeddingsServer> {
  const dims = options.dims ?? 64;
  const requests: RecordedEmbeddingRequest[] = [];
  const failures: FakeFailure[] = [];

  function handle(
    path: string,
    body: unknown,
    res: ServerResponse,
    recorded: RecordedEmbeddingRequest,
  ): void {
    const fields = asRecord(body);
    const gemini = GEMINI_PATH.exec(path.split("?")[0] ?? path);
    if (path.split("?")[0]?.endsWith("/embeddings")) {
      recorded.protocol = "openai";
      const input = fields.input;
      const texts = Array.isArray(input) ? input.map(String) : [String(input ?? "")];
      recorded.inputs = texts.length;
      const size = positive(fields.dimensions, dims);
      const data = texts.map((text, index) => ({
        object: "embedding",
        index,
        embedding: Array.from(hashEmbedding(text, size)),
      }));
      send(res, 200, {
        object: "list",
        data,
        model: fields.model,
        usage: { prompt_tokens: texts.length, total_tokens: texts.length },
      });
    } else if (gemini) {
      recorded.protocol = "gemini";
      if (gemini[2] === "embedContent") {
        recorded.inputs = 1;
        const size = positive(fields.outputDimensionality, dims);
        send(res, 200, {
          embedding: { values: Array.from(hashEmbedding(geminiText(fields.content), size)) },
        });
        return;
      }
      const list = Array.isArray(fields.requests) ? fields.requests.map(asRecord) : [];
      recorded.inputs = list.length;
      const embeddings = list.map((r) => ({
        values: Array.from(hashEmbedding(geminiText(r.content), positive(r.outputDimensionality, dims))),
      }));
      send(res, 200, { embeddings });
    } else {
      send(res, 404, { error: { message: `fake embeddings server: no route for ${path}` } });
    }
  }

  const server = http.createServer((req, res) => {
    readJson(req)
      .then((body) => {
        const path = req.url ?? "/";
        const recorded: RecordedEmbeddingRequest = {
          path,
          headers: req.headers,
          body,
          protocol: "unknown",
          inputs: 0,
        };
        requests.push(recorded);
        const failure = failures.shift();
        if (failure) {
          const message = `fake embeddings server: injected ${failure.status}`;
          send(
            res,
            failure.status,
            failure.body ?? { error: { message, code: failure.status } },
            failure.headers,
          );
          return;
        }
        handle(path, body, res, recorded);
      })
      .catch((err: unknown) => {
        if (!res.headersSent) send(res, 500, { error: { message: String(err) } });
        else res.destroy();
      });
  });
  const port = await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    failNext(failure, times = 1) {
      for (let i = 0; i < times; i++) failures.push(failure);
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
