/** ModelSpecs pointing at a fake LLM server, one per wire protocol. */
import type { ModelSpec, WireProtocol } from "../../src/llm/types.js";
import type { FakeLlmServer } from "../../src/testing/fake-llm-server.js";

/** A model served by the fake server over the given protocol. */
export function fakeModel(
  server: FakeLlmServer,
  protocol: WireProtocol,
  overrides: Partial<ModelSpec> = {},
): ModelSpec {
  return {
    provider: protocol === "openai" ? "openai" : protocol,
    id: protocol === "gemini" ? "gemini-test" : protocol === "anthropic" ? "claude-test" : "gpt-test",
    protocol,
    baseUrl: protocol === "openai" ? `${server.url}/v1` : server.url,
    apiKey: "test-key",
    contextWindow: 128_000,
    ...overrides,
  };
}

/** Retry settings that keep tests fast while still going through the backoff path. */
export const fastRetry = { retry: { baseDelayMs: 5, maxDelayMs: 20 } };
