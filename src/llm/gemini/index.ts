/** The Gemini `streamGenerateContent` wire protocol: request building and stream parsing. */
import type { ProtocolAdapter } from "../adapter.js";
import { geminiErrorMessage } from "./errors.js";
import { GeminiStreamParser } from "./parser.js";
import { buildGeminiRequest } from "./request.js";

/** Adapter for `POST /v1beta/models/{id}:streamGenerateContent?alt=sse`. */
export const geminiAdapter: ProtocolAdapter = {
  protocol: "gemini",
  buildRequest: buildGeminiRequest,
  createParser: () => new GeminiStreamParser(),
  errorMessage: geminiErrorMessage,
};

export { SKIP_SIGNATURE } from "./contents.js";
export { geminiErrorMessage } from "./errors.js";
export { GeminiStreamParser } from "./parser.js";
export { applyPartialArg, parseJsonPath } from "./partial-args.js";
export { buildGeminiRequest, JSON_SCHEMA_PARAMETERS_QUIRK, streamUrl } from "./request.js";
export { parseGenerateContentResponse } from "./response.js";
export { toGeminiJsonSchema, toGeminiSchema } from "./schema.js";
