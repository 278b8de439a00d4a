/**
 * Tool calls written as text: streams of each documented format (test/fixtures/text-tool-calls/) run
 * the tool through the real agent loop and a fake OpenAI-compatible server; the same markup in a code
 * fence, a sentence, inline code, before prose, for a tool not offered or with broken JSON does not.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { AgentEvent } from "../../src/agent/events.js";
import { runAgent } from "../../src/agent/run-agent.js";
import { loadConfig } from "../../src/config/load-config.js";
import { resolveModel } from "../../src/config/resolve-model.js";
import { TextToolCallScanner } from "../../src/llm/text-tool-calls.js";
import type { ToolCallFormat } from "../../src/llm/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { defaultToolsConfig } from "../../src/tools/builtin/defaults.js";
import { memoryTodoStore } from "../../src/tools/memory-todo-store.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { defineTool } from "../../src/tools/types.js";
import { fakeModel, fastRetry } from "../support/fake-models.js";

const fixtures = join(import.meta.dirname, "..", "fixtures", "text-tool-calls");
const fixture = (name: string) => readFileSync(join(fixtures, name), "utf8");

let server: FakeLlmServer;
let calls: Array<{ city: string; days: number }>;

beforeAll(async () => {
  server = await startFakeLlmServer({ strict: true });
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.reset();
  calls = [];
});

function tools(): ToolRegistry {
  return new ToolRegistry([
    defineTool({
      name: "get_weather",
      description: "Weather for a city",
      parameters: z.object({ city: z.string(), days: z.number().int() }),
      execute: async (args) => {
        calls.push(args);
        return `sunny in ${args.city} for ${args.days} days`;
      },
    }),
  ]);
}

async function run(text: string, format: ToolCallFormat | undefined): Promise<AgentEvent[]> {
  server.enqueue({ text }, { text: "It will be sunny." });
  const events: AgentEvent[] = [];
  for await (const event of runAgent({
    model: fakeModel(server, "openai", format ? { toolCallFormat: format } : {}),
    messages: [{ role: "user", content: "Weather in Paris?" }],
    tools: tools(),
    toolEnvironment: { workspace: process.cwd(), todos: memoryTodoStore(), config: defaultToolsConfig() },
    streamOptions: fastRetry,
  })) {
    events.push(event);
  }
  return events;
}

function shownText(events: AgentEvent[]): string {
  return events.map((e) => (e.type === "text_delta" ? e.text : "")).join("");
}

const RUNS: Array<[file: string, format: ToolCallFormat, before: string, count: number]> = [
  ["hermes.txt", "hermes", "Let me look up the weather for you.", 1],
  ["hermes-two-calls.txt", "hermes", "", 2],
  ["qwen3-coder.txt", "qwen3-coder", "I'll check both days.", 1],
  ["mistral-v3.txt", "mistral", "", 1],
  ["mistral-v11.txt", "mistral", "", 1],
  ["llama-json.txt", "llama-json", "", 1],
  ["llama-python-tag.txt", "llama-json", "", 1],
];

describe("tool calls written as text", () => {
  for (const [file, format, before, count] of RUNS) {
    for (const used of [format, "auto"] as const) {
      it(`${file} runs the tool (${used}); the text before is kept, the markup not shown`, async () => {
        const events = await run(fixture(file), used);
        const results = events.filter((e) => e.type === "tool_result");
        expect(results).toHaveLength(count);
        expect(results.every((r) => r.type === "tool_result" && r.ok)).toBe(true);
        expect(calls[0]).toStrictEqual(
          file.startsWith("hermes-two") ? { city: "Paris", days: 1 } : { city: "Paris", days: 2 },
        );
        const first = events.findIndex((e) => e.type === "turn_start" && e.iteration === 2);
        const shown = shownText(events.slice(0, first));
        expect(shown.trim()).toBe(before);
        // The next request carries a real assistant tool call and its result.
        const second = server.requests[1]?.body as { messages: Array<Record<string, unknown>> };
        const assistant = second.messages.find((m) => m.role === "assistant");
        expect(assistant?.tool_calls).toHaveLength(count);
        expect(JSON.stringify(assistant)).not.toContain("<tool_call>");
        expect(second.messages.some((m) => m.role === "tool")).toBe(true);
        const done = events.find((e) => e.type === "done");
        expect(done?.type === "done" && done.answer).toBe("It will be sunny.");
      });
    }
  }

  const NOT_CALLS: Array<[file: string, formats: ToolCallFormat[]]> = [
    ["not-code-fence.txt", ["auto", "hermes"]],
    ["not-sentence.txt", ["auto", "hermes"]],
    ["not-inline-code.txt", ["auto", "mistral"]],
    ["not-trailing-prose.txt", ["auto", "hermes"]],
    ["not-unknown-tool.txt", ["auto"]],
    ["not-bad-json.txt", ["auto", "hermes"]],
  ];
  for (const [file, formats] of NOT_CALLS) {
    for (const format of formats) {
      it(`${file} is shown as written and runs nothing (${format})`, async () => {
        const text = fixture(file);
        const events = await run(text, format);
        expect(calls).toHaveLength(0);
        expect(events.some((e) => e.type === "tool_call")).toBe(false);
        expect(shownText(events)).toBe(text);
        expect(server.requests).toHaveLength(1);
      });
    }
  }

  it("leaves markup alone for a model without a toolCallFormat (hosted APIs parse tool calls themselves)", async () => {
    const text = fixture("hermes.txt");
    const events = await run(text, undefined);
    expect(calls).toHaveLength(0);
    expect(shownText(events)).toBe(text);
  });
});

describe("TextToolCallScanner", () => {
  const schema = [{ name: "get_weather", description: "", parameters: { type: "object" } }];

  it("holds back a possible markup start split across deltas until it is decided", () => {
    const scanner = new TextToolCallScanner("auto", schema);
    expect(scanner.push("Sure.\n<tool_")).toBe("Sure.\n");
    expect(scanner.push("tip> is not markup\n")).toBe("<tool_tip> is not markup\n");
    expect(scanner.push("[TOOL")).toBe("");
    expect(scanner.push("_CALLS]")).toBe("");
    expect(scanner.finish()).toStrictEqual({ text: "[TOOL_CALLS]", calls: [] });
  });

  it("shows text mid-line at once: markup only starts a line", () => {
    const scanner = new TextToolCallScanner("hermes", schema);
    expect(scanner.push("Use <tool_call> tags")).toBe("Use <tool_call> tags");
    expect(scanner.finish()).toStrictEqual({ text: "", calls: [] });
  });

  it("takes Llama's bare JSON only as a whole message", () => {
    const scanner = new TextToolCallScanner("llama-json", schema);
    expect(scanner.push("Here it is:\n")).toBe("Here it is:\n");
    expect(scanner.push('{"name": "get_weather", "parameters": {}}')).toBe(
      '{"name": "get_weather", "parameters": {}}',
    );
  });
});

describe("toolCallFormat defaults", () => {
  const env = { DIMSUM_HOME: "/tmp/dimsum-ttc-home", DIMSUM_CONFIG: "/nonexistent/dimsum.json" };

  it("is auto for Ollama and the catalogue's format for known local families", () => {
    const config = loadConfig({ env });
    expect(resolveModel(config, "ollama:some-model").toolCallFormat).toBe("auto");
    expect(resolveModel(config, "ollama:qwen3-coder:30b").toolCallFormat).toBe("qwen3-coder");
    expect(resolveModel(config, "ollama:llama3.1:8b").toolCallFormat).toBe("llama-json");
  });

  it("is unset for hosted providers, and the config's models entry wins", () => {
    const config = loadConfig({ env: { ...env, OPENAI_API_KEY: "sk-x" } });
    expect(resolveModel(config, "openai:gpt-4o").toolCallFormat).toBeUndefined();
    config.file.models["ollama:mymodel"] = { toolCallFormat: "mistral" };
    config.file.models["ollama:plain"] = { toolCallFormat: "none" };
    expect(resolveModel(config, "ollama:mymodel").toolCallFormat).toBe("mistral");
    expect(resolveModel(config, "ollama:plain").toolCallFormat).toBeUndefined();
  });

  it("is auto for a custom provider on this machine, not for a remote one", () => {
    const config = loadConfig({ env });
    config.file.providers.llamacpp = { baseUrl: "http://127.0.0.1:8080/v1", protocol: "openai" };
    config.file.providers.remote = { baseUrl: "https://llm.example.com/v1", protocol: "openai" };
    expect(resolveModel(config, "llamacpp:whatever").toolCallFormat).toBe("auto");
    expect(resolveModel(config, "remote:whatever").toolCallFormat).toBeUndefined();
  });
});
