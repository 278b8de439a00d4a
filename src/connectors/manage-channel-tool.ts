/**
 * `manage_channel`: lets an agent list, create, change, start, stop, test and delete connectors to
 * external chat platforms (every built-in kind: Telegram, webhook, Feishu/Lark, DingTalk, WeCom). Not a built-in: an agent gets it only when an admin adds `manage_channel`
 * to its `toolsAllow` (the server registers it through `manageChannelGrant`). It acts with the
 * authority of the person it was created for, and never touches secrets: those are set in the UI, so
 * they never pass through a model or a trace.
 */
import * as z from "zod";
import { isRefusal } from "../errors.js";
import type { Actor, AgentRecord } from "../team/types.js";
import { defineTool, type Tool, type ToolResult, type ZodTool } from "../tools/types.js";
import type { ConnectorManager } from "./connector-manager.js";
import { CONNECTOR_TYPES, type ConnectorView } from "./types.js";

export const MANAGE_CHANNEL_TOOL = "manage_channel";

const settingValue = z.union([z.string(), z.number(), z.boolean()]);

const params = z.object({
  action: z.enum(["list", "status", "create", "update", "start", "stop", "test", "delete"]),
  id: z.string().optional().describe("Connector id (every action but list and create)"),
  type: z
    .enum(CONNECTOR_TYPES as [string, ...string[]])
    .optional()
    .describe("create: telegram, webhook, feishu, dingtalk or wecom"),
  name: z.string().optional().describe("create/update: a display name"),
  agentId: z.string().optional().describe("create/update: the agent answering the external chats"),
  settings: z
    .record(z.string(), settingValue)
    .optional()
    .describe(
      "create/update: plain settings, e.g. telegram {mode: 'polling'}, webhook {outboundUrl: 'https://…'}, " +
        "feishu {appId, mode: 'long-connection'|'webhook'}, dingtalk {clientId, mode: 'stream'|'webhook'}, " +
        "wecom {corpId, appAgentId}",
    ),
});

/** A connector without noise: what an agent needs to report on it. */
function summary(view: ConnectorView): Record<string, unknown> {
  return {
    id: view.id,
    type: view.type,
    name: view.name,
    agentId: view.agentId,
    state: view.status.state,
    error: view.status.error,
    pendingReplies: view.status.pending,
    failedReplies: view.status.failed,
    missingSecrets: Object.entries(view.secrets)
      .filter(([, s]) => !s.set)
      .map(([name]) => name),
    settings: view.settings,
    inboundPath: view.inboundPath,
  };
}

function needId(id: string | undefined): string {
  if (!id)
    throw Object.assign(new Error("This action needs the connector's id."), { hint: "list them first" });
  return id;
}

/** Builds the tool for an owner or admin; every call is checked against `actor`. */
export function createManageChannelTool(options: { connectors: ConnectorManager; actor: Actor }): ZodTool {
  const { connectors, actor } = options;
  return defineTool({
    name: MANAGE_CHANNEL_TOOL,
    description:
      "Manage connectors that link external chats (Telegram, a signed webhook, Feishu/Lark, DingTalk, WeCom) to agents. " +
      "action=list; status|start|stop|test|delete with id; create with type, name, agentId and settings; " +
      "update with id and the fields to change. Secrets (tokens, keys) cannot be set here: ask a person " +
      "to enter them on the Connectors page.",
    parameters: params,
    concurrencySafe: false,
    async execute(args): Promise<ToolResult | string> {
      try {
        switch (args.action) {
          case "list":
            return JSON.stringify((await connectors.list(actor)).map(summary), null, 2);
          case "status":
            return JSON.stringify(summary(await connectors.get(actor, needId(args.id))), null, 2);
          case "create": {
            if (!args.type || !args.name || !args.agentId) {
              return { content: "create needs type, name and agentId.", isError: true };
            }
            const view = await connectors.create(actor, {
              type: args.type as ConnectorView["type"],
              name: args.name,
              agentId: args.agentId,
              ...(args.settings ? { settings: args.settings } : {}),
            });
            return JSON.stringify(summary(view), null, 2);
          }
          case "update": {
            const patch = {
              ...(args.name !== undefined ? { name: args.name } : {}),
              ...(args.agentId !== undefined ? { agentId: args.agentId } : {}),
              ...(args.settings !== undefined ? { settings: args.settings } : {}),
            };
            return JSON.stringify(summary(await connectors.update(actor, needId(args.id), patch)), null, 2);
          }
          case "start":
            return JSON.stringify(summary(await connectors.start(actor, needId(args.id))), null, 2);
          case "stop":
            return JSON.stringify(summary(await connectors.stop(actor, needId(args.id))), null, 2);
          case "test":
            return JSON.stringify(await connectors.test(actor, needId(args.id)));
          case "delete":
            await connectors.delete(actor, needId(args.id));
            return `Connector ${args.id} deleted.`;
        }
      } catch (err) {
        const hint =
          err instanceof Error && "hint" in err && typeof err.hint === "string" ? ` (${err.hint})` : "";
        const message = err instanceof Error ? err.message : String(err);
        return {
          content: `${isRefusal(err) ? "" : "manage_channel failed: "}${message}${hint}`,
          isError: true,
        };
      }
    },
  });
}

/**
 * `TeamDeps.grantableTools` for manage_channel: the team offers the tool only to agents whose
 * `toolsAllow` names it, built for the person whose message started the run, so it refuses anyone
 * but owners and admins (an external guest on Telegram gets nothing from it). Runs nobody started
 * (schedules) get no tool.
 */
export function manageChannelGrant(
  connectors: () => ConnectorManager | undefined,
  userOf: (
    userId: string,
  ) =>
    | { id: string; role: Actor["role"] }
    | undefined
    | Promise<{ id: string; role: Actor["role"] } | undefined>,
): {
  names: string[];
  create: (agent: AgentRecord, requestedBy: string) => Promise<Tool[]>;
  describe: () => Tool[];
} {
  return {
    names: [MANAGE_CHANNEL_TOOL],
    describe: () => {
      const manager = connectors();
      return manager
        ? [createManageChannelTool({ connectors: manager, actor: { userId: "", role: "guest" } })]
        : [];
    },
    create: async (_agent, requestedBy) => {
      const manager = connectors();
      const user = await userOf(requestedBy);
      if (!manager || !user) return [];
      return [createManageChannelTool({ connectors: manager, actor: { userId: user.id, role: user.role } })];
    },
  };
}
