/**
 * Kimi (Moonshot): its builtin `$web_search` tool. `POST {base}/chat/completions` offering
 * `{type: "builtin_function", function: {name: "$web_search"}}`; the model calls it, the call's
 * arguments go back unchanged as the tool's result (Moonshot runs the search), and the model's
 * answer lists the results, one `title | url | summary` a line. Key: MOONSHOT_API_KEY.
 */
import { badAnswer } from "../engine-error.js";
import type { EngineHttpOptions, SearchEngine } from "../types.js";
import { endpointUrl } from "./base-url.js";
import { postKeyedJson } from "./keyed-json.js";
import { parseResultLines, resultLinesChat } from "./result-lines.js";

const LABEL = "Kimi";
/** Moonshot's API unless MOONSHOT_BASE_URL says otherwise (the `kimi:` provider's). */
export const KIMI_DEFAULT_BASE_URL = "https://api.moonshot.cn/v1";
/** A model that has the `$web_search` builtin. */
export const KIMI_SEARCH_MODEL = "kimi-k2-0905-preview";
/** Search rounds before the model must answer. */
const MAX_ROUNDS = 3;

export interface KimiSearchConfig extends EngineHttpOptions {
  apiKey: string;
  baseUrl?: string;
}

interface ChatMessage {
  role: string;
  content?: string | null;
  tool_calls?: Array<{ id?: string; function?: { name?: string; arguments?: string } }>;
  [key: string]: unknown;
}

interface ChatResponse {
  choices?: Array<{ finish_reason?: string; message?: ChatMessage }>;
}

/** A Kimi engine using `config.apiKey`. */
export function createKimiEngine(config: KimiSearchConfig): SearchEngine {
  const baseUrl = config.baseUrl ?? KIMI_DEFAULT_BASE_URL;
  const endpoint = endpointUrl(baseUrl, "/chat/completions", LABEL, "MOONSHOT_BASE_URL");
  return {
    name: "kimi",
    async search(query, { maxResults, signal }) {
      const messages: ChatMessage[] = resultLinesChat(query, maxResults);
      for (let round = 0; round <= MAX_ROUNDS; round++) {
        const body = (await postKeyedJson({
          label: LABEL,
          endpoint,
          apiKey: config.apiKey,
          payload: {
            model: KIMI_SEARCH_MODEL,
            messages,
            temperature: 0.3,
            tools: [{ type: "builtin_function", function: { name: "$web_search" } }],
          },
          signal,
          maxBytes: config.maxBytes,
        })) as ChatResponse | null;
        const choice = body?.choices?.[0];
        const message = choice?.message;
        if (!message) throw badAnswer(`${LABEL} answered without a message.`);
        const calls = message.tool_calls ?? [];
        if (choice?.finish_reason === "tool_calls" && calls.length > 0) {
          messages.push(message);
          for (const call of calls) {
            messages.push({
              role: "tool",
              tool_call_id: call.id ?? "",
              name: call.function?.name ?? "$web_search",
              // Moonshot searches itself: its arguments go back as they came.
              content: call.function?.arguments ?? "{}",
            });
          }
          continue;
        }
        return parseResultLines(typeof message.content === "string" ? message.content : "", maxResults);
      }
      throw badAnswer(`${LABEL} kept searching without answering.`);
    },
  };
}
