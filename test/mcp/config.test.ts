// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} in config text is the syntax under test
/** mcp.json: both shapes, home/cwd merging, ${VAR} expansion, filters, and errors naming file and server. */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { expandVariables } from "../../src/config/expand-variables.js";
import {
  loadMcpConfig,
  type McpHttpServerConfig,
  type McpStdioServerConfig,
  parseMcpConfig,
} from "../../src/mcp/config.js";
import { matchesGlob, toolAllowed } from "../../src/mcp/tool-filter.js";
import { makeTempDir, removeTempDir } from "./helpers.js";

const FILE = "/home/me/.dimsum/mcp.json";

describe("parseMcpConfig", () => {
  it("reads the common mcpServers shape (stdio and HTTP)", () => {
    const servers = parseMcpConfig(
      JSON.stringify({
        mcpServers: {
          files: {
            command: "npx",
            args: ["-y", "@modelcontextprotocol/server-filesystem", "."],
            env: { A: "1" },
          },
          remote: { url: "https://mcp.example.com/mcp", headers: { "X-Team": "core" } },
          legacy: { url: "https://old.example.com/sse", transport: "sse" },
          typed: { type: "sse", url: "https://typed.example.com/sse" },
        },
      }),
      FILE,
      {},
    );
    expect(servers.map((s) => [s.name, s.transport])).toEqual([
      ["files", "stdio"],
      ["remote", "http"],
      ["legacy", "sse"],
      ["typed", "sse"],
    ]);
    const files = servers[0] as McpStdioServerConfig;
    expect(files).toMatchObject({
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-filesystem", "."],
      env: { A: "1" },
    });
    expect(files.enabled).toBe(true);
    expect(files.source).toBe(FILE);
    expect((servers[1] as McpHttpServerConfig).headers).toEqual({ "X-Team": "core" });
  });

  it("reads the servers-array shape with per-server settings", () => {
    const [server] = parseMcpConfig(
      JSON.stringify({
        servers: [
          {
            name: "gh",
            transport: "http",
            url: "http://127.0.0.1:9000/mcp",
            enabled: false,
            timeout: 5000,
            connectTimeout: 2000,
            include: ["search_*"],
            exclude: ["search_code"],
          },
        ],
      }),
      FILE,
      {},
    );
    expect(server).toMatchObject({
      name: "gh",
      transport: "http",
      enabled: false,
      timeoutMs: 5000,
      connectTimeoutMs: 2000,
      include: ["search_*"],
      exclude: ["search_code"],
    });
  });

  it("reads the protocol choice (auto by default) and refuses an unknown one", () => {
    const servers = parseMcpConfig(
      JSON.stringify({
        mcpServers: {
          plain: { command: "a" },
          old: { command: "b", protocol: "2025" },
          modern: { url: "https://m.example.com/mcp", protocol: "2026-07-28" },
        },
      }),
      FILE,
      {},
    );
    expect(servers.map((s) => [s.name, s.protocol])).toEqual([
      ["plain", undefined],
      ["old", "2025"],
      ["modern", "2026-07-28"],
    ]);
    expect(() =>
      parseMcpConfig(JSON.stringify({ mcpServers: { x: { command: "a", protocol: "2024" } } }), FILE, {}),
    ).toThrow(/server "x" is invalid: protocol/);
  });

  it("treats disabled: true as enabled: false", () => {
    const [server] = parseMcpConfig(
      JSON.stringify({ mcpServers: { x: { command: "x", disabled: true } } }),
      FILE,
      {},
    );
    expect(server?.enabled).toBe(false);
  });

  it("resolves a relative cwd against the config file's folder", () => {
    const [server] = parseMcpConfig(
      JSON.stringify({ mcpServers: { x: { command: "x", cwd: "servers/x" } } }),
      FILE,
      {},
    );
    expect((server as McpStdioServerConfig).cwd).toBe("/home/me/.dimsum/servers/x");
  });

  it("expands variables in env, headers, args and urls so secrets stay out of the file", () => {
    const servers = parseMcpConfig(
      JSON.stringify({
        mcpServers: {
          local: { command: "srv", args: ["--root", "${ROOT}"], env: { GITHUB_TOKEN: "${GH_TOKEN}" } },
          remote: {
            url: "https://${HOST:-api.example.com}/mcp",
            headers: { Authorization: "Bearer ${API_TOKEN}" },
          },
        },
      }),
      FILE,
      { ROOT: "/data", GH_TOKEN: "ghp_123", API_TOKEN: "tok" },
    );
    const local = servers[0] as McpStdioServerConfig;
    const remote = servers[1] as McpHttpServerConfig;
    expect(local.args).toEqual(["--root", "/data"]);
    expect(local.env.GITHUB_TOKEN).toBe("ghp_123");
    expect(remote.url).toBe("https://api.example.com/mcp");
    expect(remote.headers.Authorization).toBe("Bearer tok");
    expect(local.problem).toBeUndefined();
  });

  it("marks a server with an unset variable as unable to start, naming the variable", () => {
    const [server] = parseMcpConfig(
      JSON.stringify({
        mcpServers: { gh: { command: "gh-mcp", env: { TOKEN: "${GH_TOKEN}", OTHER: "${MISSING_TOO}" } } },
      }),
      FILE,
      {},
    );
    expect(server?.problem).toMatch(/"gh".*GH_TOKEN, MISSING_TOO/);
  });

  it.each([
    ["not JSON", "{", /not valid JSON/],
    ["an array", "[]", /must be a JSON object/],
    [
      "a server without command or url",
      JSON.stringify({ mcpServers: { bad: { args: [] } } }),
      /"bad".*neither "command" nor "url"/,
    ],
    [
      "a wrong field type",
      JSON.stringify({ mcpServers: { bad: { command: "x", args: "a b" } } }),
      /"bad" is invalid: args/,
    ],
    [
      "a bad timeout",
      JSON.stringify({ mcpServers: { bad: { command: "x", timeout: -1 } } }),
      /"bad" is invalid: timeout/,
    ],
    ["an unnamed array entry", JSON.stringify({ servers: [{ command: "x" }] }), /servers\[0\] has no "name"/],
    [
      "a duplicate name",
      JSON.stringify({
        servers: [
          { name: "a", command: "x" },
          { name: "a", command: "y" },
        ],
      }),
      /"a" twice/,
    ],
    [
      "an invalid url",
      JSON.stringify({ mcpServers: { web: { url: "not a url" } } }),
      /"web" has an invalid url/,
    ],
  ])("rejects %s with a message naming the file", (_label, text, pattern) => {
    let message = "";
    try {
      parseMcpConfig(text, FILE, {});
    } catch (err) {
      message = (err as Error).message;
      expect((err as { code?: string }).code).toBe("config");
    }
    expect(message).toContain(FILE);
    expect(message).toMatch(pattern);
  });
});

describe("loadMcpConfig", () => {
  let home: string;
  let project: string;
  beforeEach(async () => {
    home = await makeTempDir();
    project = await makeTempDir();
  });
  afterEach(async () => {
    await removeTempDir(home);
    await removeTempDir(project);
  });

  it("merges DIMSUM_HOME and working-directory files, the project's entries winning by name", async () => {
    await writeFile(
      join(home, "mcp.json"),
      JSON.stringify({ mcpServers: { shared: { command: "home-version" }, homeOnly: { command: "h" } } }),
    );
    await writeFile(
      join(project, "mcp.json"),
      JSON.stringify({ servers: [{ name: "shared", transport: "stdio", command: "project-version" }] }),
    );
    const servers = loadMcpConfig({ home, cwd: project, env: {} });
    const byName = Object.fromEntries(servers.map((s) => [s.name, s as McpStdioServerConfig]));
    expect(Object.keys(byName).sort()).toEqual(["homeOnly", "shared"]);
    expect(byName.shared?.command).toBe("project-version");
    expect(byName.shared?.source).toBe(join(project, "mcp.json"));
  });

  it("returns nothing when neither file exists, and reads one file once when home is the cwd", async () => {
    expect(loadMcpConfig({ home, cwd: project, env: {} })).toEqual([]);
    await writeFile(join(home, "mcp.json"), JSON.stringify({ mcpServers: { a: { command: "a" } } }));
    expect(loadMcpConfig({ home, cwd: home, env: {} })).toHaveLength(1);
  });

  it("reports an unreadable file by path", async () => {
    await mkdir(join(project, "mcp.json"));
    expect(() => loadMcpConfig({ home, cwd: project, env: {} })).toThrow(join(project, "mcp.json"));
  });
});

describe("tool filters", () => {
  it("matches exact names and globs", () => {
    expect(matchesGlob("read_file", "read_file")).toBe(true);
    expect(matchesGlob("read_file", "read_*")).toBe(true);
    expect(matchesGlob("read_file", "*_file")).toBe(true);
    expect(matchesGlob("read_files", "read_file?")).toBe(true);
    expect(matchesGlob("read.file", "read?file")).toBe(true);
    expect(matchesGlob("readXfile", "read.file")).toBe(false);
    expect(matchesGlob("write_file", "read_*")).toBe(false);
  });

  it("applies include, then exclude", () => {
    const filter = { include: ["get-*", "echo"], exclude: ["get-env"] };
    expect(toolAllowed("echo", filter)).toBe(true);
    expect(toolAllowed("get-sum", filter)).toBe(true);
    expect(toolAllowed("get-env", filter)).toBe(false);
    expect(toolAllowed("toggle-logging", filter)).toBe(false);
    expect(toolAllowed("anything", { include: [], exclude: [] })).toBe(true);
  });
});

describe("expandVariables", () => {
  it("uses defaults for unset or empty variables and collects the missing ones", () => {
    const missing = new Set<string>();
    expect(expandVariables("${A}-${B:-b}-${C:-}-${D}", { A: "a", C: "" }, missing)).toBe("a-b--");
    expect([...missing]).toEqual(["D"]);
    expect(expandVariables("no $VARS here, $ {X}", {}, missing)).toBe("no $VARS here, $ {X}");
  });
});
