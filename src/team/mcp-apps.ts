/**
 * MCP Apps in chats: the `ui://` resource a tool call of an answer links to, and the tool calls the app
 * makes. Both go through the tools the answering agent has for the person using the app (its allow
 * and deny lists, their own MCP sign-ins), and only to the MCP server the app came from. An app's
 * call to a tool that asks first waits for that person's approval (or the agent's "always" grant in
 * the chat), like the agent's own calls; approving "always" records that grant.
 */
import { randomUUID } from "node:crypto";
import { approvalNeed } from "../agent/approvals.js";
import { conflict, forbidden, notFound } from "../errors.js";
import { appResourceOf, type McpAppResource } from "../mcp/app-meta.js";
import { toolsConfigForAgent } from "../tools/builtin/sandbox/index.js";
import { memoryTodoStore } from "../tools/memory-todo-store.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { JsonSchemaTool, ToolAppLink, ToolContext, ToolResult } from "../tools/types.js";
import { canSeeChannel } from "./access.js";
import { agentCapabilities, type TurnRuntime } from "./agent-turn.js";
import type { TeamStore } from "./team-store.js";
import type { Actor, AgentRecord, ChannelRecord, MessagePart } from "./types.js";

/** How long an app's call waits for its approval before it is dropped: 10 minutes. */
export const APP_APPROVAL_TTL_MS = 10 * 60 * 1000;

/** Which app: the run that answered and its tool call that rendered the app. */
export interface McpAppRef {
  channelId: string;
  runId: string;
  callId: string;
}

/** A `tools/call` result as the app reads it (MCP `CallToolResult`; a type, so it fits the SDK's open shape). */
export type McpAppCallResult = {
  content: Array<{ type: "text"; text: string } | { type: "image"; data: string; mimeType: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

/** The app's call ran (or was declined), or waits for the person's approval. */
export type McpAppCallOutcome =
  | { status: "done"; result: McpAppCallResult }
  | { status: "approval_required"; approvalId: string; tool: string; summary: string; reason: string };

export interface McpAppsDeps {
  store: TeamStore;
  runtime: TurnRuntime;
  workspaceFor: (key: string) => string;
  /** What a run still going has said so far (its answer is stored once it ends or waits). */
  liveParts: (runId: string) => MessagePart[] | undefined;
  now: () => number;
}

interface Located {
  channel: ChannelRecord;
  agent: AgentRecord;
  link: ToolAppLink;
  tools: ToolRegistry;
}

export class McpApps {
  readonly #deps: McpAppsDeps;

  constructor(deps: McpAppsDeps) {
    this.#deps = deps;
  }

  /** The app's HTML and declared CSP, read from the agent's MCP server now. */
  async resource(actor: Actor, ref: McpAppRef): Promise<McpAppResource> {
    const { link, tools } = await this.#locate(actor, ref);
    const owner = this.#mcpTools(tools).find(
      (t) => t.mcp?.server === link.server && t.mcp.uiResourceUri === link.resourceUri,
    );
    if (!owner?.mcp) throw unavailable(link.server);
    return appResourceOf(link.resourceUri, await owner.mcp.readResource(link.resourceUri));
  }

  /** Runs the app's `tools/call` for the agent, or holds it for the person's approval. */
  async call(
    actor: Actor,
    ref: McpAppRef,
    name: string,
    args: Record<string, unknown>,
  ): Promise<McpAppCallOutcome> {
    const located = await this.#locate(actor, ref);
    const { tool, args: checked } = this.#prepare(located, name, args);
    const ctx = this.#context(actor, located);
    const need = await approvalNeed(tool, checked, ctx, located.agent.askFirst);
    const granted = await this.#deps.store.grants.has(located.channel.id, located.agent.id, tool.name);
    if (need && !granted) {
      const approvalId = randomUUID();
      // In the database: the answer may reach any instance, and is taken once.
      const now = this.#deps.now();
      await this.#deps.store.appCalls.put(
        approvalId,
        {
          actor: actor.userId,
          channelId: ref.channelId,
          runId: ref.runId,
          callId: ref.callId,
          tool: tool.name,
          name,
          args: checked,
          expiresAt: now + APP_APPROVAL_TTL_MS,
        },
        now,
      );
      return { status: "approval_required", approvalId, tool: tool.name, ...need };
    }
    return { status: "done", result: await this.#run(located, tool, checked, ctx) };
  }

  /** The person's answer to a call that waits: approved, it runs now; declined, the app is told. */
  async decide(
    actor: Actor,
    ref: McpAppRef,
    approvalId: string,
    decision: { decision: "approve" | "reject"; always?: boolean },
  ): Promise<McpAppCallOutcome> {
    const located = await this.#locate(actor, ref);
    // Only the person whose app asked may answer (taken once); anyone else learns nothing about the call.
    const owner = { actor: actor.userId, ...ref };
    const pending = await this.#deps.store.appCalls.take(approvalId, owner, this.#deps.now());
    if (!pending) {
      throw notFound("No app tool call waits for this approval.", "use the app again to ask once more");
    }
    if (decision.decision === "reject") {
      return {
        status: "done",
        result: {
          content: [{ type: "text", text: `The user declined to run ${pending.name}.` }],
          isError: true,
        },
      };
    }
    const { tool, args } = this.#prepare(located, pending.name, pending.args);
    if (decision.always) {
      await this.#deps.store.grants.add({
        channelId: located.channel.id,
        agentId: located.agent.id,
        tool: tool.name,
        grantedBy: actor.userId,
        grantedAt: this.#deps.now(),
      });
    }
    return { status: "done", result: await this.#run(located, tool, args, this.#context(actor, located)) };
  }

  /** The chat, answer, app link and the agent's tools for this person; one 404 for all that is missing. */
  async #locate(actor: Actor, ref: McpAppRef): Promise<Located> {
    const { store, runtime } = this.#deps;
    const missing = () => notFound("No such app in this chat.");
    const channel = await store.channels.get(ref.channelId);
    if (!channel || !canSeeChannel(actor, channel)) throw missing();
    const run = (await store.runs.get(ref.runId))?.run;
    if (!run || run.channelId !== channel.id) throw missing();
    const parts = this.#deps.liveParts(run.id) ?? (await store.messages.byRun(run.id))?.parts ?? [];
    const part = parts.find((p) => p.type === "tool" && p.callId === ref.callId);
    const link = part?.type === "tool" ? part.app : undefined;
    // An app of an MCP server this person may not see is answered as if it did not exist.
    if (!link || !runtime.capabilities.canUseMcpServer(actor, link.server)) throw missing();
    const agent = await store.agents.get(run.agentId);
    if (!agent) throw conflict(`The agent @${run.agentId} that answered no longer exists.`);
    const { tools } = await agentCapabilities(runtime, agent, actor.userId);
    return { channel, agent, link, tools };
  }

  /** The tool of the app's own server, allowed for the agent, with arguments checked against its schema. */
  #prepare(
    { agent, link, tools }: Located,
    name: string,
    args: Record<string, unknown>,
  ): { tool: JsonSchemaTool; args: Record<string, unknown> } {
    const tool = this.#mcpTools(tools).find((t) => t.mcp?.server === link.server && t.mcp.tool === name);
    if (!tool) {
      throw forbidden(
        `The app may not call "${name}": it is not a tool @${agent.id} may use from MCP server "${link.server}".`,
        "an admin can allow it in the agent's tools",
      );
    }
    const prepared = tools.prepareCall(tool.name, JSON.stringify(args));
    if (!prepared.ok) throw forbidden(prepared.error);
    return { tool, args: prepared.args };
  }

  #mcpTools(tools: ToolRegistry): JsonSchemaTool[] {
    return tools.list().filter((t): t is JsonSchemaTool => t.kind === "json" && t.mcp !== undefined);
  }

  #context(actor: Actor, { channel, agent }: Located): ToolContext {
    return {
      signal: new AbortController().signal,
      workspace: this.#deps.workspaceFor(channel.id),
      runId: `app:${channel.id}`,
      userId: actor.userId,
      todos: memoryTodoStore(),
      config: toolsConfigForAgent(this.#deps.runtime.config.tools, agent),
    };
  }

  async #run(
    { tools }: Located,
    tool: JsonSchemaTool,
    args: Record<string, unknown>,
    ctx: ToolContext,
  ): Promise<McpAppCallResult> {
    return toCallToolResult(await tools.execute({ tool, args }, ctx));
  }
}

/** A Dimsum tool result back in MCP's shape, for the app. */
export function toCallToolResult(result: ToolResult): McpAppCallResult {
  const content: McpAppCallResult["content"] =
    typeof result.content === "string"
      ? [{ type: "text", text: result.content }]
      : result.content.map((part) =>
          part.type === "text"
            ? { type: "text", text: part.text }
            : { type: "image", data: part.data, mimeType: part.mimeType },
        );
  const out: McpAppCallResult = { content };
  const structured = result.app?.structuredContent ?? result.data;
  if (typeof structured === "object" && structured !== null && !Array.isArray(structured)) {
    out.structuredContent = structured as Record<string, unknown>;
  }
  if (result.isError) out.isError = true;
  return out;
}

function unavailable(server: string) {
  return conflict(
    `The app's MCP server "${server}" is not available to this agent now (not connected, or its tool is no longer allowed).`,
    "check Settings → MCP servers and the agent's tools, then reload the chat",
  );
}
