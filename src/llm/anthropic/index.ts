/** The Anthropic Messages wire protocol: request building and stream parsing. */
import type { ProtocolAdapter } from "../adapter.js";
import { anthropicErrorMessage } from "./errors.js";
import { AnthropicStreamParser } from "./parser.js";
import { buildAnthropicRequest } from "./request.js";

/** Adapter for `POST /v1/messages` with `stream: true`. */
export const anthropicAdapter: ProtocolAdapter = {
  protocol: "anthropic",
  buildRequest: buildAnthropicRequest,
  createParser: () => new AnthropicStreamParser(),
  errorMessage: anthropicErrorMessage,
};

export { anthropicErrorMessage } from "./errors.js";
export { AnthropicStreamParser } from "./parser.js";
export { buildAnthropicRequest, messagesUrl } from "./request.js";
export { parseMessagesResponse } from "./response.js";
