/**
 * The one assembly of what a run may use, for the CLI and the team server alike. Built once per
 * process over the long-lived services (memory store, knowledge service, MCP servers, loaded HTTP
 * tools, plugins and skills); `forRun` then gives each run its tool registry — built-ins, HTTP tools,
 * plugins, memory tools, `rag_query`, MCP tools and the team tools it was handed, narrowed by the
 * allow/deny lists — and its context layers (skills, core and recalled memory, persona).
 */

import { combineLayerProviders, type LayerProvider } from "../agent/layered-context.js";
import type { DimsumConfig } from "../config/load-config.js";
import { DimsumError, invalid } from "../errors.js";
import type { KnowledgeService } from "../knowledge/knowledge-service.js";
import { createRagTool } from "../knowledge/rag-tool.js";
import { createMemoryTools } from "../memory/tools.js";
import type { MemoryStore } from "../memory/types.js";
import type { Viewer, Visible } from "../shared/visibility.js";
import type { BrowserSessions } from "../tools/browser/browser-sessions.js";
import { browserTool } from "../tools/browser/browser-tool.js";
import { builtinTools } from "../tools/builtin/index.js";
import { normalizeJsonSchema, zodToJsonSchema } from "../tools/json-schema.js";
import type { ProcessManager } from "../tools/process/process-manager.js";
import { processTools } from "../tools/process/process-tools.js";
import { ToolRegistry } from "../tools/registry.js";
import type { Tool } from "../tools/types.js";
import { memoryLayer, personaLayer, skillLayer } from "./context-layers.js";
import { type Extensions, NO_EXTENSIONS } from "./extensions.js";
import { LOAD_SKILL_TOOL, loadSkillTool } from "./load-skill-tool.js";
import { canUseMcpServer, mcpToolsVisibleTo } from "./mcp-visibility.js";

/** Where a tool comes from, as the catalogue and the agent editor show it. */
export type ToolSource = "builtin" | "memory" | "knowledge" | "mcp" | "http" | "plugin" | "team";

/** One tool of the catalogue (`GET /api/tools`). */
export interface CatalogueEntry {
  name: string;
  description: string;
  source: ToolSource;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
  /** Offered only to agents whose allow list names it (tools acting with a person's authority). */
  grantOnly: boolean;
}

/** The MCP servers' tools as the assembly needs them (the CLI's manager or the server's pool). */
export interface McpToolSource {
  /** Tools of the servers connected now, as `<server>_<tool>`. */
  tools(): Tool[];
  /** Configured server names; `<server>_…` names are accepted in allow lists before it connects. */
  serverNames(): string[];
  /** Resolves once every server's first connection attempt settled. */
  ready(): Promise<void>;
  /** Tools of the servers `person` signed in to with their own account (team server). */
  personalTools?(person: string): Promise<Tool[]>;
  /** Who sees a configured server (team server); undefined for an unknown name. */
  access?(server: string): Visible | undefined;
}

/** Tools the team creates per run (call_agent, manage_schedule, …), described for the catalogue. */
export interface TeamToolSet {
  /** Instances for their names, descriptions and schemas only; never executed. */
  describe(): Tool[];
  /** Names offered only when an allow list names them. */
  grantOnly: readonly string[];
}

export interface CapabilityServices {
  config: DimsumConfig;
  extensions?: Extensions;
  memory?: MemoryStore;
  knowledge?: KnowledgeService;
  mcp?: McpToolSource;
  team?: TeamToolSet;
  /** Session processes: when given, the process_* tools are built-ins too. */
  processes?: ProcessManager;
  /** Sessions' browser pages: when given, the browser tool is a built-in too. */
  browser?: BrowserSessions;
  /** Built-in tools left out of the catalogue (e.g. `execute_command` where no sandbox works). */
  withoutBuiltins?: readonly string[];
}

/** What one run asks for. */
export interface RunRequest {
  /** The person the run acts for: whose memories and knowledge. Absent: no memory, no knowledge. */
  person?: string;
  /** The person with their role: only knowledge bases and MCP servers they may see are used. */
  viewer?: Viewer;
  /** The agent answering (memories written by a team agent belong to it). */
  agentId?: string;
  /** Memory tools and layers (default true when there is a person). */
  memory?: boolean;
  /** Whether the person may read knowledge bases (guests may not; default true). */
  knowledge?: boolean;
  /** Bases `rag_query` may search (default: every base the person may read). */
  knowledgeBases?: readonly string[];
  /** Allow list (undefined: every tool that is not grant-only). */
  allow?: readonly string[];
  deny?: readonly string[];
  /** Exactly these tools (`--tools a,b`); an unknown name is a configuration error. */
  only?: readonly string[];
  /** Tools made for this run (call_agent bound to the run, granted tools), subject to the lists. */
  runTools?: readonly Tool[];
  /** Skills always given (an agent's named skills). */
  skills?: readonly string[];
  /** The persona text, read at each run. */
  persona?: () => Promise<string>;
  /** Session owners `recall_search` may search (default: the person's own sessions). */
  recallOwners?: () => Promise<string[]>;
}

export interface RunCapabilities {
  tools: ToolRegistry;
  layers: LayerProvider;
}

/** The capability assembly of one process. */
export class CapabilityAssembly {
  readonly #services: CapabilityServices;
  readonly #extensions: Extensions;
  /** Built-ins, HTTP tools and plugins: the same for every run, schemas converted once. */
  readonly #static: ToolRegistry;
  readonly #sources = new Map<string, ToolSource>();
  readonly #grantOnly: ReadonlySet<string>;
  readonly problems: string[];

  constructor(services: CapabilityServices) {
    this.#services = services;
    this.#extensions = services.extensions ?? NO_EXTENSIONS;
    this.problems = [...this.#extensions.problems];
    this.#grantOnly = new Set(services.team?.grantOnly ?? []);
    const left = new Set(services.withoutBuiltins ?? []);
    const builtins = [
      ...builtinTools({ webSearch: services.config.webSearch }),
      ...(services.processes ? processTools : []),
      ...(services.browser ? [browserTool] : []),
    ].filter((t) => !left.has(t.name));
    this.#static = new ToolRegistry();
    this.#add(this.#static, builtins, "builtin");
    this.#add(this.#static, this.#extensions.http, "http");
    this.#add(this.#static, this.#extensions.plugins, "plugin");
  }

  /** The skills found (for `dimsum skills` and the CLI's `/skill` completion). */
  get skills() {
    return this.#extensions.skills;
  }

  /** Resolves once the MCP servers' first connection attempts settled (their tools are known). */
  async ready(): Promise<void> {
    await this.#services.mcp?.ready();
  }

  /** True when `viewer` may see and use MCP server `server` (an unknown name: true). */
  canUseMcpServer(viewer: Viewer, server: string): boolean {
    const mcp = this.#services.mcp;
    return mcp === undefined || canUseMcpServer(mcp, viewer, server);
  }

  /**
   * Every tool a run may be given, with its source; MCP tools of the servers connected now (with a
   * viewer: of those servers they may see).
   */
  catalogue(viewer?: Viewer): CatalogueEntry[] {
    const entries: CatalogueEntry[] = this.#static.list().map((t) => this.#entry(t, this.#sourceOf(t)));
    const { memory, knowledge, mcp, team } = this.#services;
    if (memory) for (const t of createMemoryTools(memory)) entries.push(this.#entry(t, "memory"));
    if (knowledge) entries.push(this.#entry(createRagTool(knowledge), "knowledge"));
    const mcpTools = mcp ? (viewer ? mcpToolsVisibleTo(mcp, viewer, mcp.tools()) : mcp.tools()) : [];
    for (const t of mcpTools) entries.push(this.#entry(t, "mcp"));
    for (const t of team?.describe() ?? []) entries.push(this.#entry(t, "team"));
    const seen = new Set<string>();
    return entries.filter((e) => !seen.has(e.name) && seen.add(e.name));
  }

  /** Refuses names that are not in the catalogue, listing the known ones. */
  checkToolNames(names: readonly string[]): void {
    // Built-ins left out here (no sandbox for the shell) are still valid names in allow and deny lists.
    const known = new Set([
      ...this.catalogue().map((e) => e.name),
      ...(this.#services.withoutBuiltins ?? []),
    ]);
    const servers = this.#services.mcp?.serverNames() ?? [];
    const unknown = names.filter((n) => !known.has(n) && !servers.some((s) => n.startsWith(`${s}_`)));
    if (unknown.length === 0) return;
    throw invalid(
      `Unknown tool${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")}.`,
      `known tools: ${[...known].join(", ") || "(none)"}`,
    );
  }

  /** The tools and context layers of one run. */
  async forRun(request: RunRequest): Promise<RunCapabilities> {
    const { memory, knowledge, mcp } = this.#services;
    const person = request.person;
    const memoryScope =
      memory !== undefined && person !== undefined && (request.memory ?? true)
        ? request.agentId
          ? { userId: person, agentId: request.agentId }
          : { userId: person }
        : undefined;
    const offered = (name: string) =>
      (request.only === undefined || request.only.includes(name)) &&
      (request.allow === undefined ? !this.#grantOnly.has(name) : request.allow.includes(name)) &&
      !(request.deny ?? []).includes(name);

    const tools = this.#static.subset(this.#static.names().filter(offered));
    const extra: Tool[] = [];
    if (memory && memoryScope) {
      extra.push(
        ...createMemoryTools(memory, {
          scope: memoryScope,
          ...(request.recallOwners ? { recallOwners: request.recallOwners } : {}),
        }),
      );
    }
    if (knowledge && person !== undefined && (request.knowledge ?? true)) {
      extra.push(
        createRagTool(knowledge, {
          ...(request.agentId ? { agentId: request.agentId } : {}),
          ...(request.viewer ? { viewer: request.viewer } : {}),
          ...(request.knowledgeBases ? { bases: [...request.knowledgeBases] } : {}),
        }),
      );
    }
    if (mcp) {
      await mcp.ready();
      const mcpTools = [...mcp.tools()];
      if (person !== undefined && mcp.personalTools) mcpTools.push(...(await mcp.personalTools(person)));
      // Only the servers the run's person may see (a run for no one: the servers everyone sees).
      extra.push(...mcpToolsVisibleTo(mcp, request.viewer, mcpTools));
    }
    extra.push(...(request.runTools ?? []));
    // Skills need their loader wherever there are skills; it only reads instructions, so the allow
    // list does not have to name it (an exact `--tools` list or a deny list still applies).
    const skills = this.#extensions.skills;
    if (skills.length > 0 && (request.only?.includes(LOAD_SKILL_TOOL) ?? true)) {
      if (!(request.deny ?? []).includes(LOAD_SKILL_TOOL) && !tools.has(LOAD_SKILL_TOOL)) {
        tools.register(loadSkillTool(skills));
      }
    }
    for (const tool of extra) if (offered(tool.name) && !tools.has(tool.name)) tools.register(tool);
    if (request.only) this.#checkOnly(request.only, tools);

    const providers: LayerProvider[] = [
      skillLayer(skills, request.skills ?? [], { hints: this.#services.config.file.skillHints === true }),
    ];
    if (memory && memoryScope) providers.push(memoryLayer(memory, memoryScope));
    // The persona comes last so no other provider can replace it.
    if (request.persona) providers.push(personaLayer(request.persona));
    return { tools, layers: combineLayerProviders(providers) };
  }

  #checkOnly(only: readonly string[], tools: ToolRegistry): void {
    const missing = only.filter((n) => !tools.has(n));
    if (missing.length === 0) return;
    const known = this.catalogue().map((e) => e.name);
    throw new DimsumError(
      "config",
      `${missing.length === 1 ? "Unknown tool" : "Unknown tools"}: ${missing.join(", ")}.`,
      {
        hint: `available tools: ${known.join(", ") || "(none)"}`,
      },
    );
  }

  #add(registry: ToolRegistry, tools: readonly Tool[], source: ToolSource): void {
    for (const tool of tools) {
      if (registry.has(tool.name)) {
        this.problems.push(`tool ${tool.name} is defined twice; the first definition is used`);
        continue;
      }
      registry.register(tool);
      this.#sources.set(tool.name, source);
    }
  }

  #sourceOf(tool: Tool): ToolSource {
    return this.#sources.get(tool.name) ?? "builtin";
  }

  #entry(tool: Tool, source: ToolSource): CatalogueEntry {
    const parameters =
      tool.kind === "zod" ? zodToJsonSchema(tool.parameters) : normalizeJsonSchema(tool.parameters);
    return {
      name: tool.name,
      description: tool.description,
      source,
      parameters: parameters as Record<string, unknown>,
      grantOnly: this.#grantOnly.has(tool.name),
    };
  }
}
