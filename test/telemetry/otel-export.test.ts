/**
 * OpenTelemetry GenAI export end to end: `dimsum run` (protobuf) and `dimsum serve` (JSON) send their
 * spans and metrics to a local OTLP/HTTP receiver. A run with two tool calls (one failing) whose
 * second model call fails: the span tree, names and attributes, and the two GenAI histograms; the
 * server's run-queue gauges.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { call, login, waitFor } from "../server/helpers.js";
import { startServe } from "../server/serve-process.js";
import { cleanEnv, jsonLines, runCli } from "../support/cli.js";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../support/otlp-receiver.js";

let llm: FakeLlmServer;
let otlp: OtlpReceiver;

beforeAll(async () => {
  llm = await startFakeLlmServer({ strict: true });
  otlp = await startOtlpReceiver();
});
afterAll(async () => {
  await llm.close();
  await otlp.close();
});
beforeEach(() => {
  llm.reset();
  otlp.spans.length = 0;
  otlp.metricNames.clear();
  otlp.contentTypes.length = 0;
});

/** Two tool calls (the second fails: no such file), then the model call after them fails. */
function scriptRunWithTwoToolsAndAnError(): void {
  llm.enqueue({
    text: "Let me check.",
    toolCalls: [
      { id: "call_calc", name: "calculator", args: { expression: "6*7" } },
      { id: "call_read", name: "read_file", args: { path: "no-such-file.txt" } },
    ],
    usage: { input: 120, output: 30 },
  });
  llm.enqueue({ error: { status: 400 } });
}

function expectTree(spans: ReceivedSpan[], agent: string, model: string) {
  const byName = (name: string) => spans.filter((s) => s.name === name);
  const [root] = byName(`invoke_agent ${agent}`);
  expect(root, `spans: ${spans.map((s) => s.name).join(", ")}`).toBeDefined();
  if (!root) throw new Error("no root span");
  expect(root.parentSpanId).toBe("");
  expect(root.attributes).toMatchObject({
    "gen_ai.operation.name": "invoke_agent",
    "gen_ai.provider.name": "openai",
    "gen_ai.request.model": model,
    "gen_ai.agent.id": agent,
  });
  // The run failed: the root says how.
  expect(root.status.code).toBe(2);
  expect(typeof root.attributes["error.type"]).toBe("string");

  const chats = byName(`chat ${model}`);
  expect(chats).toHaveLength(2);
  for (const chat of chats) {
    expect(chat.parentSpanId).toBe(root.spanId);
    expect(chat.traceId).toBe(root.traceId);
    expect(chat.kind).toBe(3); // CLIENT
    expect(chat.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": model,
    });
  }
  const ok = chats.find((c) => c.status.code !== 2);
  const failed = chats.find((c) => c.status.code === 2);
  expect(ok?.attributes).toMatchObject({
    "gen_ai.response.model": model,
    "gen_ai.usage.input_tokens": 120,
    "gen_ai.usage.output_tokens": 30,
  });
  expect(failed?.attributes["error.type"]).toBe(root.attributes["error.type"]);

  const calc = byName("execute_tool calculator")[0];
  const read = byName("execute_tool read_file")[0];
  expect(calc?.parentSpanId).toBe(ok?.spanId);
  expect(read?.parentSpanId).toBe(ok?.spanId);
  expect(calc?.attributes).toMatchObject({
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": "calculator",
    "gen_ai.tool.call.id": "call_calc",
  });
  expect(calc?.status.code).not.toBe(2);
  expect(read?.attributes).toMatchObject({
    "gen_ai.tool.name": "read_file",
    "gen_ai.tool.call.id": "call_read",
    "error.type": "tool_error",
  });
  expect(read?.status.code).toBe(2);
  return { root, calc, read };
}

describe("OpenTelemetry GenAI export", () => {
  it("`dimsum run` exports the run's span tree and metrics over http/protobuf", async () => {
    scriptRunWithTwoToolsAndAnError();
    const cwd = mkdtempSync(join(tmpdir(), "dimsum-otel-cwd-"));
    const result = await runCli(["run", "--json", "--yes", "what is 6*7? and read no-such-file.txt"], {
      cwd,
      env: cleanEnv({
        OPENAI_API_KEY: "sk-test",
        OPENAI_BASE_URL: `${llm.url}/v1`,
        DIMSUM_MODEL: "openai:gpt-test",
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
        OTEL_SERVICE_NAME: "dimsum-cli-test",
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true",
      }),
      timeoutMs: 30_000,
    });
    const events = jsonLines(result.stdout);
    const error = events.find((e) => e.type === "error");
    expect(error, result.stderr).toBeDefined();
    // Exported before the process ended.
    expect(otlp.contentTypes.every((t) => t.includes("protobuf"))).toBe(true);
    const { root, calc } = expectTree(otlp.spans, "dimsum", "gpt-test");
    expect(root.serviceName).toBe("dimsum-cli-test");
    expect(root.attributes["error.type"]).toBe(error?.code);
    // Content was asked for: the prompt and the tool's arguments and result are there.
    expect(String(root.attributes["gen_ai.input.messages"])).toContain("what is 6*7?");
    expect(calc?.attributes["gen_ai.tool.call.arguments"]).toBe('{"expression":"6*7"}');
    expect(calc?.attributes["gen_ai.tool.call.result"]).toBe("42");
    expect([...otlp.metricNames].sort()).toEqual([
      "gen_ai.client.operation.duration",
      "gen_ai.client.token.usage",
    ]);
  });

  it("`dimsum serve` exports the span tree of an API run over http/json, without content", async () => {
    const home = mkdtempSync(join(tmpdir(), "dimsum-otel-home-"));
    const serve = await startServe(home, {
      DIMSUM_OWNER_PASSWORD: "otel-owner-password",
      DIMSUM_MODEL: "openai:gpt-test",
      OPENAI_API_KEY: "sk-test-otel",
      OPENAI_BASE_URL: `${llm.url}/v1`,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${otlp.url}/v1/traces`,
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${otlp.url}/v1/metrics`,
      OTEL_METRIC_EXPORT_INTERVAL: "300",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    });
    try {
      expect(serve.output()).toContain("OpenTelemetry: exporting GenAI spans");
      const owner = await login(serve.url, "owner", "otel-owner-password");
      const created = await call(serve.url, "/api/tokens", { session: owner, body: { name: "otel" } });
      const { token } = (await created.json()) as { token: string };
      scriptRunWithTwoToolsAndAnError();
      const res = await fetch(`${serve.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify({
          model: "assistant",
          messages: [{ role: "user", content: "what is 6*7? and read no-such-file.txt" }],
        }),
      });
      expect(res.status).toBeGreaterThanOrEqual(400);
      await waitFor(() => (otlp.spans.some((s) => s.name === "invoke_agent assistant") ? true : undefined));
      const { root, calc } = expectTree(otlp.spans, "assistant", "gpt-test");
      expect(root.serviceName).toBe("dimsum");
      expect(root.attributes["gen_ai.agent.name"]).toBe("Assistant");
      expect(otlp.contentTypes.every((t) => t.includes("json"))).toBe(true);
      // No content unless asked for.
      expect(root.attributes["gen_ai.input.messages"]).toBeUndefined();
      expect(calc?.attributes["gen_ai.tool.call.arguments"]).toBeUndefined();
      expect(calc?.attributes["gen_ai.tool.call.result"]).toBeUndefined();
      // The instance's run queue, as gauges.
      await waitFor(() => (otlp.metricNames.has("dimsum.runs.queued") ? true : undefined));
      expect([...otlp.metricNames]).toEqual(
        expect.arrayContaining([
          "dimsum.runs.live",
          "dimsum.runs.queued",
          "dimsum.runs.queue.oldest_wait",
          "dimsum.runs.queue.wait_p99",
          "dimsum.event_loop.delay",
          "dimsum.heap.share",
        ]),
      );
    } finally {
      await serve.stop();
    }
  });
});
