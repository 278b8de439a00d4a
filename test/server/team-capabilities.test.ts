/**
 * The capability assembly end to end: a real `dimsum serve` process with an MCP server process from
 * npm (mcp.json), an HTTP tool pointing at a loopback endpoint, a JS plugin file and a knowledge base
 * ingested with `dimsum kb add`. A starter agent in a direct chat is offered every one of those tools,
 * calls them, and every result reaches the model.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { type AddressInfo, createServer as createNetServer } from "node:net";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { CatalogueEntry } from "../../src/capabilities/index.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { EVERYTHING } from "../mcp/helpers.js";
import { projectRoot } from "../support/fixtures.js";
import { call, login, tempDir, waitFor } from "./helpers.js";

const CLI = resolve(projectRoot, "bin/dimsum.js");
const PASSWORD = "capabilities-test-password";

let llm: FakeLlmServer;
let endpoint: Server;
let serve: ChildProcess | undefined;
let output = "";

beforeAll(async () => {
  llm = await startFakeLlmServer();
  endpoint = createServer((req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ status: "green", code: "HTTP-OK-7", path: req.url }));
  });
  await new Promise<void>((r) => endpoint.listen(0, "127.0.0.1", r));
});

afterAll(async () => {
  serve?.kill("SIGTERM");
  await new Promise((r) => (serve && serve.exitCode === null ? serve.once("exit", r) : r(undefined)));
  await llm.close();
  await new Promise((r) => endpoint.close(r));
});

function prepareHome(): string {
  const home = tempDir("dimsum-capabilities-");
  const docs = join(home, "docs");
  mkdirSync(docs);
  writeFileSync(
    join(docs, "espresso.md"),
    "# Espresso machine\n\nTo descale the machine, enter the service code DESCALE-42 and hold the steam button.\n",
  );
  const kb = spawnSync(process.execPath, [CLI, "kb", "add", "handbook", docs], {
    env: { ...process.env, DIMSUM_HOME: home },
    encoding: "utf8",
  });
  expect(kb.status, kb.stderr).toBe(0);
  writeFileSync(
    join(home, "mcp.json"),
    JSON.stringify({
      mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } },
    }),
  );
  mkdirSync(join(home, "tools", "http"), { recursive: true });
  const port = (endpoint.address() as AddressInfo).port;
  writeFileSync(
    join(home, "tools", "http", "build-status.json"),
    JSON.stringify({
      name: "build_status",
      description: "The status of the build server.",
      parameters: { type: "object", properties: {} },
      url: `http://127.0.0.1:${port}/status`,
      allowPrivateNetwork: true,
    }),
  );
  writeFileSync(
    join(home, "tools", "shout.mjs"),
    `export default {
  name: "shout",
  description: "Says the text loudly.",
  parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  async execute({ text }) { return text.toUpperCase() + "!"; },
};\n`,
  );
  return home;
}

async function freePort(): Promise<number> {
  const probe = createNetServer();
  await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
  const { port } = probe.address() as AddressInfo;
  await new Promise((r) => probe.close(r));
  return port;
}

async function startServe(home: string): Promise<string> {
  serve = spawn(process.execPath, [CLI, "serve", "--port", String(await freePort())], {
    cwd: home,
    env: {
      ...process.env,
      DIMSUM_HOME: home,
      DIMSUM_OWNER_PASSWORD: PASSWORD,
      DIMSUM_MODEL: "openai:gpt-test",
      OPENAI_API_KEY: "sk-test-capabilities",
      OPENAI_BASE_URL: `${llm.url}/v1`,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  serve.stdout?.on("data", (d: Buffer) => (output += d.toString()));
  serve.stderr?.on("data", (d: Buffer) => (output += d.toString()));
  return waitFor(() => /serving on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1]);
}

function toolNamesOf(body: unknown): string[] {
  const tools = (body as { tools?: Array<{ function: { name: string } }> }).tools ?? [];
  return tools.map((t) => t.function.name);
}

it("offers a starter agent knowledge, memory, MCP, HTTP and plugin tools, and every result reaches the model", async () => {
  const home = prepareHome();
  const url = await startServe(home);
  const owner = await login(url, "owner", PASSWORD);

  const catalogue = (await (await call(url, "/api/tools", { session: owner })).json()) as CatalogueEntry[];
  const sourceOf = (name: string) => catalogue.find((e) => e.name === name)?.source;
  expect(sourceOf("rag_query")).toBe("knowledge");
  expect(sourceOf("memory_write")).toBe("memory");
  expect(sourceOf("everything_echo")).toBe("mcp");
  expect(sourceOf("build_status")).toBe("http");
  expect(sourceOf("shout")).toBe("plugin");
  expect(sourceOf("call_agent")).toBe("team");
  expect(sourceOf("calculator")).toBe("builtin");
  expect(catalogue.find((e) => e.name === "manage_schedule")?.grantOnly).toBe(true);

  llm.reset();
  llm.enqueue(
    {
      toolCalls: [
        { name: "rag_query", args: { query: "how do I descale the espresso machine" } },
        { name: "memory_write", args: { text: "The user owns a Gaggia espresso machine", type: "semantic" } },
        { name: "everything_echo", args: { message: "mcp-ping-123" } },
        { name: "build_status", args: {} },
        { name: "shout", args: { text: "plugin works" } },
      ],
    },
    { text: "All five tools answered." },
  );
  const created = await call(url, "/api/channels", {
    session: owner,
    body: { kind: "direct", name: "me and assistant", agentIds: ["assistant"] },
  });
  expect(created.status).toBe(201);
  const channel = (await created.json()) as { id: string };
  const posted = await call(url, `/api/channels/${channel.id}/messages`, {
    session: owner,
    body: { text: "Use every tool you have, please." },
  });
  expect(posted.status).toBe(201);
  for (let answered = false, tries = 0; !answered; await new Promise((r) => setTimeout(r, 50))) {
    if (++tries > 600)
      throw new Error(`no answer; server said:\n${output}\nLLM requests: ${llm.requests.length}`);
    const res = await call(url, `/api/channels/${channel.id}/messages`, { session: owner });
    const messages = (await res.json()) as Array<{ author: { type: string }; text: string }>;
    answered = messages.some((m) => m.author.type === "agent" && m.text.includes("All five"));
  }

  const [first, second] = llm.requests;
  const offered = toolNamesOf(first?.body);
  for (const name of [
    "rag_query",
    "memory_write",
    "everything_echo",
    "build_status",
    "shout",
    "calculator",
  ]) {
    expect(offered).toContain(name);
  }
  const results = JSON.stringify(
    (
      (second?.body as { messages?: Array<{ role: string; content: unknown }> } | undefined)?.messages ?? []
    ).filter((m) => m.role === "tool"),
  );
  expect(results).toContain("DESCALE-42");
  expect(results).toContain("Saved memory");
  expect(results).toContain("mcp-ping-123");
  expect(results).toContain("HTTP-OK-7");
  expect(results).toContain("PLUGIN WORKS!");
  expect(results).not.toContain("Unknown tool");
}, 60_000);
