/** Embedding requests and responses per wire protocol: OpenAI-compatible `/embeddings` and Gemini `batchEmbedContents`. */
import { DimsumError } from "../../errors.js";
import type { ModelSpec } from "../types.js";

const GEMINI_DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com";

export interface EmbeddingRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** Builds the HTTP request that embeds `texts` with `model`. */
export function buildEmbeddingRequest(
  model: ModelSpec,
  texts: string[],
  dimensions?: number,
): EmbeddingRequest {
  if (model.protocol === "openai") {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json",
    };
    if (model.apiKey) headers.authorization = `Bearer ${model.apiKey}`;
    Object.assign(headers, model.headers);
    const body: Record<string, unknown> = { model: model.id, input: texts, encoding_format: "float" };
    if (dimensions !== undefined) body.dimensions = dimensions;
    return { url: `${model.baseUrl.replace(/\/+$/, "")}/embeddings`, headers, body: JSON.stringify(body) };
  }
  if (model.protocol === "gemini") {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json",
    };
    if (model.apiKey) headers["x-goog-api-key"] = model.apiKey;
    Object.assign(headers, model.headers);
    const name = /^(models|tunedModels)\//.test(model.id) ? model.id : `models/${model.id}`;
    const requests = texts.map((text) => ({
      model: name,
      content: { parts: [{ text }] },
      ...(dimensions !== undefined ? { outputDimensionality: dimensions } : {}),
    }));
    const base = (model.baseUrl.trim() || GEMINI_DEFAULT_BASE_URL).replace(/\/+$/, "");
    const versioned = /\/v1(alpha|beta)?$/.test(base) ? base : `${base}/v1beta`;
    return { url: `${versioned}/${name}:batchEmbedContents`, headers, body: JSON.stringify({ requests }) };
  }
  throw new DimsumError("config", `${model.provider} (${model.protocol} protocol) has no embeddings API`, {
    hint: "set DIMSUM_EMBEDDING_MODEL to an OpenAI-compatible, Gemini or Ollama model, e.g. openai:text-embedding-3-small",
  });
}

function badResponse(model: ModelSpec, detail: string): DimsumError {
  return new DimsumError(
    "provider_unavailable",
    `${model.provider} returned an unusable embeddings response: ${detail}`,
    {
      hint: `check that ${model.id} is an embedding model and the base URL ${model.baseUrl} serves embeddings`,
    },
  );
}

function toVector(model: ModelSpec, value: unknown, at: number): Float32Array {
  if (typeof value === "string") {
    // base64 float32, for servers that ignore encoding_format: "float".
    const bytes = Buffer.from(value, "base64");
    const out = new Float32Array(Math.floor(bytes.length / 4));
    new Uint8Array(out.buffer).set(bytes.subarray(0, out.length * 4));
    if (out.length > 0) return out;
  } else if (Array.isArray(value) && value.length > 0 && value.every((x) => typeof x === "number")) {
    return Float32Array.from(value as number[]);
  }
  throw badResponse(model, `embedding ${at} is not a list of numbers`);
}

/** Reads the vectors out of a response body, in input order, checking count and dimensions. */
export function parseEmbeddingResponse(model: ModelSpec, bodyText: string, expected: number): Float32Array[] {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    throw badResponse(model, `body is not JSON (${bodyText.slice(0, 120)})`);
  }
  const record = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
  let vectors: Float32Array[];
  if (model.protocol === "gemini") {
    const list = record.embeddings;
    if (!Array.isArray(list)) throw badResponse(model, "no `embeddings` list");
    vectors = list.map((item, i) => toVector(model, (item as { values?: unknown } | null)?.values, i));
  } else {
    const list = record.data;
    if (!Array.isArray(list)) throw badResponse(model, "no `data` list");
    const items = list.map((item, i) => {
      const entry = (item ?? {}) as { index?: unknown; embedding?: unknown };
      return {
        index: typeof entry.index === "number" ? entry.index : i,
        vector: toVector(model, entry.embedding, i),
      };
    });
    vectors = items.sort((a, b) => a.index - b.index).map((item) => item.vector);
  }
  if (vectors.length !== expected)
    throw badResponse(model, `${vectors.length} embeddings for ${expected} inputs`);
  const dims = vectors[0]?.length;
  if (vectors.some((v) => v.length !== dims)) throw badResponse(model, "embeddings of different lengths");
  return vectors;
}
