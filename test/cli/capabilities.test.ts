import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { cleanEnv, jsonLines, runCli } from "../support/cli.js";
import { projectRoot } from "../support/fixtures.js";

let llm: FakeLlmServer;
let api: Server;
let apiUrl: string;

beforeAll(async () => {
  llm = await startFakeLlmServer({ strict: true });
  api = createServer((req, res) => {
    res.setHeader("content-type", "application/json");
    res.end(
      JSON.stringify({
        ticket: { id: new URL(req.url ?? "", "http://x").searchParams.get("id"), state: "open" },
      }),
    );
  });
  await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
  const address = api.address();
  apiUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
});
afterAll(async () => {
  await llm.close();
  await new Promise((resolve) => api.close(resolve));
});
beforeEach(() => llm.reset());

/** A project folder with a skill, an HTTP tool and a JS plugin. */
function project(): string {
  const dir = mkdtempSync(join(tmpdir(), "dimsum-project-"));
  mkdirSync(join(dir, "skills/haiku-writer"), { recursive: true });
  writeFileSync(
    join(dir, "skills/haiku-writer/SKILL.md"),
    "---\nname: haiku-writer\ndescription: Write haiku poems about any topic when the user asks for a haiku.\n---\nAlways answer in three lines of 5, 7 and 5 syllables. SKILL-MARKER-42\n",
  );
  mkdirSync(join(dir, "tools/http"), { recursive: true });
  writeFileSync(
    join(dir, "tools/http/ticket.json"),
    JSON.stringify({
      name: "get_ticket",
      description: "Look up a ticket by id",
      parameters: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
      method: "GET",
      url: `${apiUrl}/tickets`,
      query: { id: "{{id}}" },
      allowPrivateNetwork: true,
      responseExtract: "ticket.state",
    }),
  );
  writeFileSync(
    join(dir, "tools/shout.mjs"),
    `export default { name: "shout", description: "Upper-cases text", parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] }, execute: async ({ text }) => text.toUpperCase() };\n`,
  );
  writeFileSync(join(dir, "tools/broken.mjs"), "export default {{{ nope\n");
  const everything = join(projectRoot, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
  writeFileSync(
    join(dir, "mcp.json"),
    JSON.stringify({ mcpServers: { demo: { command: process.execPath, args: [everything, "stdio"] } } }),
  );
  return dir;
}

describe("tools and skills from the project folder", () => {
  it("loads a project skill on demand and calls an MCP tool, an HTTP tool and a JS plugin in one run", async () => {
    const cwd = project();
    const env = cleanEnv({
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: `${llm.url}/v1`,
      DIMSUM_MODEL: "openai:gpt-4o",
    });
    llm.enqueue(
      {
        toolCalls: [
          { name: "load_skill", args: { name: "haiku-writer" } },
          { name: "get_ticket", args: { id: "T-7" } },
          { name: "shout", args: { text: "open" } },
          { name: "demo_echo", args: { message: "from mcp" } },
        ],
      },
      { text: "Ticket T-7 is OPEN" },
    );
    const result = await runCli(["run", "--json", "write a haiku about ticket T-7"], { env, cwd });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/broken\.mjs/);
    const events = jsonLines(result.stdout);
    // The project's skill is in the index the model reads (its body loads with load_skill on demand).
    const request = JSON.stringify(llm.requests[0]?.body);
    expect(request).toContain("haiku-writer");
    expect(request).toContain('"load_skill"');
    const results = events.filter((e) => e.type === "tool_result");
    expect(results.find((e) => e.name === "get_ticket")).toMatchObject({ ok: true });
    expect(String(results.find((e) => e.name === "get_ticket")?.output)).toContain("open");
    expect(results.find((e) => e.name === "shout")).toMatchObject({ ok: true, output: "OPEN" });
    expect(results.find((e) => e.name === "demo_echo")).toMatchObject({ ok: true });
    expect(String(results.find((e) => e.name === "demo_echo")?.output)).toContain("from mcp");
    expect(result.stderr).toMatch(/mcp demo: connected/);
    const first = JSON.stringify(llm.requests[0]?.body);
    // The body is not in the request until the model loads it.
    expect(first).not.toContain("SKILL-MARKER-42");
    expect(String(results.find((e) => e.name === "load_skill")?.output)).toContain("SKILL-MARKER-42");
    expect(first).toContain('"name":"get_ticket"');
  });

  it("does not inject an unrelated skill, and `dimsum skills` lists skills with errors", async () => {
    const cwd = project();
    mkdirSync(join(cwd, "skills/bad"), { recursive: true });
    writeFileSync(join(cwd, "skills/bad/SKILL.md"), "---\nname: bad\ndescription: [unclosed\n---\nbody\n");
    const env = cleanEnv({
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: `${llm.url}/v1`,
      DIMSUM_MODEL: "openai:gpt-4o",
    });
    llm.enqueue({ text: "4" });
    await runCli(["run", "what is 2+2"], { env, cwd });
    expect(JSON.stringify(llm.requests[0]?.body)).not.toContain("SKILL-MARKER-42");

    const listed = await runCli(["skills"], { env, cwd });
    expect(listed.stdout).toContain("haiku-writer");
    expect(listed.stderr).toMatch(/skills\/bad\/SKILL\.md:3/);
    expect(listed.code).toBe(1);
  });
});
