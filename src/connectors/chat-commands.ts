/**
 * Commands people send in an external chat, answered by the connector itself (no agent runs):
 * `/help`, `/agents` (who answers here), `/bind <group>` and `/bind direct` (for a linked person who
 * may manage the group), `/link <code>` (links the sender to their web account; private chats only).
 * Anything else, `/flow` included, goes to the chat's channel as a message.
 */
import { DimsumError, isRefusal } from "../errors.js";
import type { Actor, ChannelRecord, Team } from "../team/types.js";
import type { ChatBinder } from "./chat-binder.js";
import { serviceActor } from "./inbound-pipeline.js";
import type { PersonLinks } from "./person-links.js";
import type { ConnectorRecord, InboundMessage } from "./types.js";

const COMMAND = /^\/(help|agents|bind|link)(?:@[\w.-]+)?(?:\s+([\s\S]*))?$/i;

export type ChatCommand = { name: "help" | "agents" | "bind" | "link"; arg: string };

/** The command of a message, if it is one of ours. */
export function parseChatCommand(text: string): ChatCommand | undefined {
  const match = COMMAND.exec(text.trim());
  if (!match) return undefined;
  return { name: (match[1] ?? "").toLowerCase() as ChatCommand["name"], arg: (match[2] ?? "").trim() };
}

export const HELP_TEXT = [
  "Dimsum in this chat:",
  "• Write to the team: no mention goes to the leader, @name to one agent (e.g. @coder), @all to every agent.",
  "• /flow <task> runs the group's collaboration chain.",
  "• /agents shows who answers here.",
  "• /bind <group> makes this chat a Dimsum group (/bind direct: back to one agent). For linked members.",
  "• /link <code> links you to your web account (Settings → Account shows the code). Send it to me in a private chat.",
].join("\n");

export interface ChatCommandDeps {
  team: Team;
  binder: ChatBinder;
  links: PersonLinks;
}

/** Runs one command; returns the reply for the chat. */
export async function runChatCommand(
  deps: ChatCommandDeps,
  connector: ConnectorRecord,
  message: InboundMessage,
  actor: Actor,
  channelId: string,
  command: ChatCommand,
): Promise<string> {
  switch (command.name) {
    case "help":
      return HELP_TEXT;
    case "agents":
      return agentsText(
        deps.team,
        connector,
        await deps.team.getChannel(serviceActor(connector.id), channelId),
      );
    case "link":
      if (command.arg === "") return "Send /link followed by the six digits Settings → Account shows.";
      return deps.links.redeem(
        connector,
        message.user.id,
        command.arg,
        message.chat.group === true ? undefined : message.chat.id,
      );
    case "bind":
      return bind(deps, connector, message, actor, command.arg);
  }
}

async function bind(
  deps: ChatCommandDeps,
  connector: ConnectorRecord,
  message: InboundMessage,
  actor: Actor,
  arg: string,
): Promise<string> {
  if (actor.role === "guest") {
    return "⚠️ Only linked members can bind this chat. Link your account first: Settings → Account in the web UI shows /link <code>; send it to me in a private chat.";
  }
  if (arg === "") return "Send /bind <group name> (as the web UI shows it), or /bind direct.";
  try {
    if (arg.toLowerCase() === "direct") {
      await deps.binder.keepDirect(actor, connector, message.chat.id);
      return "✅ This chat is a direct chat again.";
    }
    const group = await deps.binder.findGroup(actor, arg);
    await deps.binder.bindGroup(actor, connector, message.chat.id, group.id);
    return `✅ This chat is now the group "${group.name}".\n${await agentsText(deps.team, connector, group)}`;
  } catch (err) {
    if (isRefusal(err) && err instanceof DimsumError) return `⚠️ ${err.toLine()}`;
    throw err;
  }
}

async function agentsText(team: Team, connector: ConnectorRecord, channel: ChannelRecord): Promise<string> {
  const service = serviceActor(connector.id);
  const ids = channel.members.filter((m) => m.type === "agent").map((m) => m.id);
  const lines: string[] = [];
  for (const id of ids) {
    const agent = await team.getAgent(service, id).catch(() => undefined);
    const label = agent ? `${agent.emoji} ${agent.name} (@${agent.id})` : `@${id}`;
    lines.push(`• ${label}${id === channel.leaderAgentId ? " — leader" : ""}`);
  }
  const head =
    channel.kind === "group" ? `Agents of the group "${channel.name}":` : "One agent answers this chat:";
  const chain =
    channel.kind === "group" && channel.chain.length > 0
      ? `\nChain (/flow): ${channel.chain.map((s) => `@${s.agentId}`).join(" → ")}`
      : "";
  return `${head}\n${lines.join("\n")}${chain}`;
}
