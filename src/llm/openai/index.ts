/** Public surface of the OpenAI Chat Completions adapter. */
export { openaiAdapter } from "./adapter.js";
export { parseChatCompletion } from "./completion.js";
export { errorMessage } from "./error-message.js";
export { buildRequest } from "./request.js";
export { createParser } from "./stream-parser.js";
