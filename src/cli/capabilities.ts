/**
 * Loads what a command can offer the model beyond the built-ins: HTTP tools and JS plugins from the
 * tools folders, and skills from the skills folders. Problems are reported, never fatal.
 */
import type { LayerProvider } from "../agent/layered-context.js";
import type { DimsumConfig } from "../config/load-config.js";
import { loadMcpConfig } from "../mcp/config.js";
import {
  defaultSkillDirs,
  loadSkills,
  parseSkillCommand,
  type Skill,
  selectSkills,
} from "../skills/index.js";
import { createBuiltinRegistry } from "../tools/builtin/index.js";
import { defaultHttpToolDirs, loadHttpTools } from "../tools/http/index.js";
import { defaultPluginDirs, loadPlugins } from "../tools/plugins/index.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { Tool } from "../tools/types.js";
import { webSearchConfigFromEnv } from "../tools/web-search/index.js";

export interface Capabilities {
  tools: ToolRegistry;
  /** One line per configured MCP server: connected with N tools, or why it failed. */
  mcpStatus: string[];
  skills: Skill[];
  /** One line per problem: `path[:line]: message`. */
  problems: string[];
  layers: LayerProvider;
  /** Stops MCP servers this command started. */
  close(): Promise<void>;
}

/** Builds the tool registry (narrowed to `toolNames` when given) and the skill layer provider. */
export async function loadCapabilities(
  config: DimsumConfig,
  cwd: string,
  toolNames?: string[],
  extraTools: Tool[] = [],
): Promise<Capabilities> {
  const [http, plugins, skills] = await Promise.all([
    loadHttpTools(defaultHttpToolDirs(config.home, cwd), config.env, {
      definitions: config.file.httpTools ?? [],
    }),
    loadPlugins(defaultPluginDirs(config.home, cwd)),
    loadSkills(defaultSkillDirs(config.home, cwd)),
  ]);
  const all = createBuiltinRegistry(undefined, { webSearch: webSearchConfigFromEnv(config.env) });
  const problems = [
    ...http.errors.map((e) => `${e.path}: ${e.message}`),
    ...plugins.errors.map((e) => `${e.path}: ${e.message}`),
    ...skills.errors.map((e) => `${e.path}${e.line ? `:${e.line}` : ""}: ${e.message}`),
  ];
  for (const tool of [...extraTools, ...http.tools, ...plugins.tools]) {
    if (all.has(tool.name)) problems.push(`tool ${tool.name} is defined twice; the first definition is used`);
    else all.register(tool);
  }
  const mcp = await startMcp(config, cwd, all, problems);
  const tools = toolNames ? all.subset(toolNames) : all;
  const layers: LayerProvider = async ({ query }) => {
    const command = parseSkillCommand(query);
    const chosen = command
      ? selectSkills(skills.skills, command.rest, { explicit: command.names })
      : selectSkills(skills.skills, query);
    return {
      layers: { skills: chosen.map((s) => ({ name: s.name, body: s.body })) },
      skills: chosen.map((s) => s.name),
    };
  };
  return {
    tools,
    skills: skills.skills,
    problems,
    layers,
    mcpStatus: mcp.status,
    close: mcp.close,
  };
}

/** Connects the servers in mcp.json (in parallel) and registers their tools; the SDK loads only if needed. */
async function startMcp(
  config: DimsumConfig,
  cwd: string,
  registry: ToolRegistry,
  problems: string[],
): Promise<{ status: string[]; close: () => Promise<void> }> {
  let servers: ReturnType<typeof loadMcpConfig>;
  try {
    servers = loadMcpConfig({ home: config.home, cwd, env: config.env });
  } catch (err) {
    problems.push((err as Error).message);
    return { status: [], close: async () => {} };
  }
  if (servers.length === 0) return { status: [], close: async () => {} };
  const [{ McpManager }, { describeMcpStatus }] = await Promise.all([
    import("../mcp/manager.js"),
    import("./commands/mcp.js"),
  ]);
  const manager = new McpManager({ servers, env: config.env, registry });
  const statuses = await manager.start();
  return { status: statuses.map(describeMcpStatus), close: () => manager.close() };
}
