/**
 * Dimsum's MCP client and the two protocol revisions, against real server processes: a server on the
 * v2 SDK that speaks only 2026-07-28 (over Streamable HTTP and over stdio), where elicitation,
 * sampling and roots arrive as `input_required` results; and 1.x SDK servers (the everything server,
 * the client-features fixture), which get the 2025 `initialize` handshake after the probe.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpClientHandlers } from "../../src/mcp/client-handlers.js";
import type { McpServerConfig } from "../../src/mcp/config.js";
import { McpManager } from "../../src/mcp/manager.js";
import {
  everything,
  FIXTURES,
  httpServer,
  type RunningHttpServer,
  startEverythingHttp,
  stdioServer,
  stopProcess,
  testEnv,
  textOf,
  toolContext,
} from "./helpers.js";

const MODERN = join(FIXTURES, "modern-server.mjs");
const MODERN_REVISION = "2026-07-28";

/** Starts the modern-only fixture over HTTP; resolves once it prints its URL. */
async function startModernHttp(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [MODERN, "http"], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening (\S+)/.exec(output);
      if (match?.[1]) resolve(match[1]);
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once("exit", () => reject(new Error(`modern server exited: ${output}`)));
  });
  return { url, child };
}

/** What the person (played by code) answers, and what they were asked. */
function person() {
  const asked: string[] = [];
  const handlers: McpClientHandlers = {
    elicit: async (_server, params) => {
      asked.push(params.message);
      return { action: "accept", content: { city: "Porto" } };
    },
    sample: async (_server, params) => {
      asked.push(`sample ${params.maxTokens}`);
      return { role: "assistant", content: { type: "text", text: "dumplings win" }, model: "fake-model" };
    },
    roots: [{ uri: "file:///work/project", name: "project" }],
  };
  return { asked, handlers };
}

async function call(manager: McpManager, wireName: string, args: unknown = {}) {
  const prepared = manager.registry.prepareCall(wireName, JSON.stringify(args));
  if (!prepared.ok) throw new Error(prepared.error);
  return manager.registry.execute(prepared, toolContext());
}

describe.each(["http", "stdio"] as const)("a v2-SDK server that speaks only 2026-07-28 (%s)", (mode) => {
  let manager: McpManager;
  let child: ChildProcess | undefined;
  const { asked, handlers } = person();

  beforeAll(async () => {
    let server: McpServerConfig;
    if (mode === "http") {
      const started = await startModernHttp();
      child = started.child;
      server = httpServer("modern", started.url);
    } else {
      server = stdioServer("modern", [MODERN, "stdio"]);
    }
    manager = new McpManager({
      servers: [server],
      env: testEnv,
      handlers,
    });
    await manager.start();
  }, 60_000);
  afterAll(async () => {
    await manager.close();
    if (child) await stopProcess(child);
  });

  it("negotiates 2026-07-28 through server/discover and calls a tool", async () => {
    const status = manager.status("modern");
    expect(status?.lastError).toBeUndefined();
    expect(status?.state).toBe("connected");
    expect(status?.protocolVersion).toBe(MODERN_REVISION);
    expect(status?.serverInfo?.name).toBe("modern-only");
    expect(textOf(await call(manager, "modern_echo", { message: "hi" }))).toBe("Echo (modern era): hi");
  });

  it("answers elicitation, sampling and roots that arrive as input_required results", async () => {
    expect(textOf(await call(manager, "modern_ask_city"))).toContain("shipped to Porto");
    expect(asked).toContain("Where should the parcel go?");
    expect(textOf(await call(manager, "modern_summarise"))).toContain("summary: dumplings win");
    expect(asked).toContain("sample 50");
    expect(textOf(await call(manager, "modern_list_roots"))).toContain("file:///work/project");
  });

  it("reads resources and prompts on the new revision", async () => {
    const connection = manager.connection("modern");
    const resources = await connection.listResources();
    expect(resources.map((r) => r.uri)).toContain("notes://welcome");
    const read = await connection.readResource("notes://welcome");
    expect(JSON.stringify(read.contents)).toContain("The secret word is bao.");
    const prompts = await connection.listPrompts();
    expect(prompts.map((p) => p.name)).toContain("greet");
    const prompt = await connection.getPrompt("greet", { name: "Ada" });
    expect(JSON.stringify(prompt.messages)).toContain("Say hello to Ada.");
  });
});

describe("1.x SDK servers get the 2025 handshake after the probe", () => {
  let manager: McpManager;
  let http: RunningHttpServer;

  beforeAll(async () => {
    http = await startEverythingHttp("streamableHttp");
    manager = new McpManager({
      servers: [
        everything("old_stdio"),
        httpServer("old_http", http.url),
        stdioServer("features", [join(FIXTURES, "client-features-server.mjs")]),
      ],
      env: testEnv,
      handlers: person().handlers,
    });
    await manager.start();
  }, 60_000);
  afterAll(async () => {
    await manager.close();
    await http.stop();
  });

  it("falls back over stdio and Streamable HTTP, and the tools work", async () => {
    for (const name of ["old_stdio", "old_http"]) {
      const status = manager.status(name);
      expect(status?.state).toBe("connected");
      expect(status?.protocolVersion).toMatch(/^2025-/);
    }
    expect(textOf(await call(manager, "old_stdio_echo", { message: "a" }))).toBe("Echo: a");
    expect(textOf(await call(manager, "old_http_echo", { message: "b" }))).toBe("Echo: b");
  });

  it("still answers a 1.x server's elicitation and roots requests", async () => {
    expect(manager.status("features")?.protocolVersion).toMatch(/^2025-/);
    expect(textOf(await call(manager, "features_list_roots"))).toContain("file:///work/project");
  });
});
