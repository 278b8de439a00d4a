/**
 * `dimsum run --schema FILE.json`: the final answer is JSON valid against the schema, after tools; an
 * invalid answer is sent back once with what was wrong; each protocol asks for it in its own form.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildGeminiRequest } from "../../src/llm/gemini/request.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { cleanEnv, jsonLines, runCli } from "../support/cli.js";

let server: FakeLlmServer;
let dir: string;
let schemaFile: string;

const SCHEMA = {
  type: "object",
  properties: {
    city: { type: "string" },
    total: { type: "number" },
    tags: { type: "array", items: { type: "string" } },
  },
  required: ["city", "total"],
};

beforeAll(async () => {
  server = await startFakeLlmServer({ strict: true });
  dir = mkdtempSync(join(tmpdir(), "dimsum-schema-"));
  schemaFile = join(dir, "answer.schema.json");
  writeFileSync(schemaFile, JSON.stringify(SCHEMA));
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => server.reset());

const PROTOCOLS = [
  ["openai:gpt-4o", { OPENAI_API_KEY: "k", OPENAI_BASE_URL: `__URL__/v1` }],
  ["anthropic:claude-sonnet-4-5", { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: "__URL__" }],
  ["gemini:gemini-2.5-flash", { GEMINI_API_KEY: "k", GEMINI_BASE_URL: "__URL__" }],
] as const;

function envFor(vars: Record<string, string>): NodeJS.ProcessEnv {
  return cleanEnv(
    Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, v.replace("__URL__", server.url)])),
  );
}

describe("dimsum run --schema", () => {
  it("uses two tools, sends an invalid answer back once, and prints the valid object alone", async () => {
    for (const [model, vars] of PROTOCOLS) {
      server.reset();
      server.enqueue(
        { toolCalls: [{ name: "calculator", args: { expression: "2+3" } }] },
        { toolCalls: [{ name: "calculator", args: { expression: "5*4" } }] },
        { text: 'Here you go: {"city": "Lyon"}' },
        { text: '```json\n{"city": "Lyon", "total": 20, "tags": ["a"]}\n```' },
      );
      const result = await runCli(["run", "--model", model, "--schema", schemaFile, "sum it up"], {
        env: envFor(vars),
        timeoutMs: 60_000,
      });
      expect(result.stderr, model).not.toContain("error");
      expect(result.code, model).toBe(0);
      expect(JSON.parse(result.stdout), model).toEqual({ city: "Lyon", total: 20, tags: ["a"] });
      expect(server.requests, model).toHaveLength(4);
      // The invalid answer went back with what was wrong.
      const last = JSON.stringify(server.requests[3]?.body);
      expect(last, model).toContain("does not follow the required JSON Schema");
      expect(last, model).toContain("the answer is not JSON");
      // The schema is in the instructions of every call.
      expect(JSON.stringify(server.requests[0]?.body), model).toContain(
        '\\"required\\":[\\"city\\",\\"total\\"]',
      );
    }
  }, 120_000);

  it("asks each protocol for structured output in its own form", async () => {
    const forms: Record<string, unknown> = {};
    for (const [model, vars] of PROTOCOLS) {
      server.reset();
      server.enqueue({ text: '{"city": "Oslo", "total": 1}' });
      const result = await runCli(
        ["run", "--model", model, "--tools", "calculator", "--schema", schemaFile, "go"],
        {
          env: envFor(vars),
        },
      );
      expect(result.code, model).toBe(0);
      forms[model] = server.requests[0]?.body;
    }
    const openai = forms["openai:gpt-4o"] as { response_format: unknown };
    expect(openai.response_format).toEqual({
      type: "json_schema",
      json_schema: { name: "answer", schema: SCHEMA, strict: false },
    });
    const anthropic = forms["anthropic:claude-sonnet-4-5"] as {
      output_config: { format: { type: string; schema: { additionalProperties: boolean } } };
    };
    expect(anthropic.output_config.format.type).toBe("json_schema");
    // Objects are closed, as the API wants; the rest of the schema is as given.
    expect(anthropic.output_config.format.schema).toEqual({ ...SCHEMA, additionalProperties: false });
    // Gemini gets it only on a call without tools (older models refuse both together).
    const gemini = forms["gemini:gemini-2.5-flash"] as { generationConfig?: Record<string, unknown> };
    expect(gemini.generationConfig?.responseJsonSchema).toBeUndefined();
    const request = buildGeminiRequest(
      {
        provider: "gemini",
        id: "gemini-2.5-flash",
        protocol: "gemini",
        baseUrl: server.url,
        contextWindow: 1e6,
      },
      { messages: [{ role: "user", content: "go" }] },
      { responseFormat: { name: "answer", schema: SCHEMA } },
    );
    expect((request.body as { generationConfig: unknown }).generationConfig).toEqual({
      responseMimeType: "application/json",
      responseJsonSchema: SCHEMA,
    });
  }, 120_000);

  it("fails with the problems when the corrected answer is invalid too, and in --json gives the output", async () => {
    const [model, vars] = PROTOCOLS[0];
    server.enqueue({ text: '{"city": 3}' }, { text: '{"city": "Rome"}' });
    const failed = await runCli(["run", "--model", model, "--schema", schemaFile, "go"], {
      env: envFor(vars),
      timeoutMs: 60_000,
    });
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe("");
    expect(failed.stderr).toContain("does not follow the output schema");
    expect(failed.stderr).toContain("missing required property `total`");

    server.reset();
    server.enqueue({ text: '{"city": "Rome", "total": 7}' });
    const json = await runCli(["run", "--json", "--model", model, "--schema", schemaFile, "go"], {
      env: envFor(vars),
      timeoutMs: 60_000,
    });
    expect(json.code).toBe(0);
    expect(jsonLines(json.stdout).at(-1)).toMatchObject({ type: "done", output: { city: "Rome", total: 7 } });
  }, 120_000);

  it("refuses a schema file that is missing or not a schema before calling the model", async () => {
    const [model, vars] = PROTOCOLS[0];
    const missing = await runCli(["run", "--model", model, "--schema", join(dir, "nope.json"), "go"], {
      env: envFor(vars),
      timeoutMs: 60_000,
    });
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain("cannot read the schema file");
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ type: "object", properties: { a: { type: "nonsense" } } }));
    const invalid = await runCli(["run", "--model", model, "--schema", bad, "go"], {
      env: envFor(vars),
      timeoutMs: 60_000,
    });
    expect(invalid.code).toBe(3);
    expect(invalid.stderr).toContain("not a valid JSON Schema");
    expect(server.requests).toHaveLength(0);
  }, 120_000);
});
