/**
 * Nothing of OpenTelemetry (nor the A2A SDK) loads in `dimsum run` unless an OTLP endpoint is set:
 * a preloaded hook records every package the process requires (the bundle requires its externals).
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { cleanEnv, runCli } from "../support/cli.js";
import { type OtlpReceiver, startOtlpReceiver } from "../support/otlp-receiver.js";

let llm: FakeLlmServer;
let otlp: OtlpReceiver;
const dir = mkdtempSync(join(tmpdir(), "dimsum-lazy-"));
const hook = join(dir, "record-loads.cjs");
writeFileSync(
  hook,
  `const Module = require("node:module");
const fs = require("node:fs");
const load = Module._load;
Module._load = function (request, ...rest) {
  if (/^@(opentelemetry|a2a-js)\\//.test(request)) fs.appendFileSync(process.env.LOADS_FILE, request + "\\n");
  return load.call(this, request, ...rest);
};
`,
);

beforeAll(async () => {
  llm = await startFakeLlmServer({ defaultTurn: { text: "ok" } });
  otlp = await startOtlpReceiver();
});
afterAll(async () => {
  await llm.close();
  await otlp.close();
});

async function loadsOf(extra: Record<string, string>): Promise<string[]> {
  const loads = join(dir, `loads-${Math.random().toString(36).slice(2)}.txt`);
  writeFileSync(loads, "");
  const result = await runCli(["run", "hello"], {
    env: cleanEnv({
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: `${llm.url}/v1`,
      DIMSUM_MODEL: "openai:gpt-test",
      NODE_OPTIONS: `--require ${hook}`,
      LOADS_FILE: loads,
      ...extra,
    }),
  });
  expect(result.code, result.stderr).toBe(0);
  return readFileSync(loads, "utf8").split("\n").filter(Boolean);
}

describe("OpenTelemetry loads only when configured", () => {
  it("without an endpoint no @opentelemetry or @a2a-js module is loaded", async () => {
    expect(await loadsOf({})).toEqual([]);
  });

  it("with an endpoint the SDK loads and the run is exported", async () => {
    const loads = await loadsOf({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url });
    expect(loads).toContain("@opentelemetry/sdk-trace");
    expect(loads.some((l) => l.startsWith("@a2a-js/"))).toBe(false);
    expect(otlp.spans.map((s) => s.name)).toContain("invoke_agent dimsum");
  });
});
