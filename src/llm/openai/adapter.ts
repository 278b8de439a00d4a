/** The OpenAI Chat Completions protocol adapter: OpenAI, DeepSeek, Qwen, Kimi, GLM, Ollama, vLLM and more. */
import type { ProtocolAdapter } from "../adapter.js";
import { errorMessage } from "./error-message.js";
import { buildRequest } from "./request.js";
import { createParser } from "./stream-parser.js";

export const openaiAdapter: ProtocolAdapter = {
  protocol: "openai",
  buildRequest,
  createParser,
  errorMessage,
};
