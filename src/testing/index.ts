/**
 * `dimsum/testing`: the scripted fake servers the tests and benches use (a fake LLM speaking the
 * OpenAI, Anthropic and Gemini streaming protocols, a fake embeddings API, fake web search engines).
 * A subpath of its own, so `import "dimsum"` never loads them.
 */
export {
  type FakeEmbeddingsServer,
  type FakeEmbeddingsServerOptions,
  hashEmbedding,
  type RecordedEmbeddingRequest,
  startFakeEmbeddingsServer,
} from "./fake-embeddings-server.js";
export {
  type FakeErrorTurn,
  type FakeLlmServer,
  type FakeLlmServerOptions,
  type FakeReply,
  type FakeToolCall,
  type FakeTurn,
  type FakeTurnFn,
  type RecordedRequest,
  startFakeLlmServer,
} from "./fake-llm-server.js";
export {
  FAKE_ENGINE_NAMES,
  type FakeEngineMode,
  type FakeEngineName,
  type FakeSearchEngines,
  type FakeSearchEnginesOptions,
  fakeHits,
  startFakeSearchEngines,
} from "./fake-search-engines.js";
export {
  type FakeTranscriptionServer,
  type FakeTranscriptionServerOptions,
  type RecordedTranscription,
  startFakeTranscriptionServer,
} from "./fake-transcription-server.js";
