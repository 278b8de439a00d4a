/**
 * The JSON APIs reached with a bearer key (Tavily, Perplexity, Grok, Kimi): one POST of a JSON
 * payload, the status checked, the answer parsed.
 */
import { requestEngineJson } from "../engine-http.js";

export interface KeyedJsonPost {
  /** Shown in error messages, e.g. "Tavily". */
  label: string;
  endpoint: URL;
  apiKey: string;
  /** Sent as the JSON body. */
  payload: unknown;
  signal: AbortSignal;
  maxBytes?: number;
}

/** POSTs `payload` with `Authorization: Bearer <key>`; a non-2xx status or a non-JSON answer throws. */
export function postKeyedJson(post: KeyedJsonPost): Promise<unknown> {
  return requestEngineJson({
    label: post.label,
    url: new URL(post.endpoint),
    method: "POST",
    headers: {
      accept: "application/json",
      "content-type": "application/json",
      authorization: `Bearer ${post.apiKey}`,
    },
    body: JSON.stringify(post.payload),
    signal: post.signal,
    maxBytes: post.maxBytes,
  });
}
