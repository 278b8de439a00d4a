/**
 * The message side of the team facade: posting (routed to agents, a flow or a meeting), editing and
 * regenerating answers, attachments, MCP apps' calls from a chat, and reading a chat's messages.
 */

import { createHash } from "node:crypto";
import { checkFileCount, cleanFileName } from "../attachments/kinds.js";
import { attachBytes } from "../attachments/to-parts.js";
import { conflict, forbidden, invalid, notFound } from "../errors.js";
import { assertNotGuest } from "./access.js";
import type { QueuedFor } from "./message-queue.js";
import { routeMessage } from "./routing.js";
import { type TeamParts, whenReady } from "./team-parts.js";
import { peopleIn } from "./team-prompt.js";
import type {
  Actor,
  ChannelMessage,
  ChannelRecord,
  MessagePart,
  PostResult,
  QueueMode,
  Team,
  TeamRun,
} from "./types.js";

const MAX_MESSAGE_BYTES = 32 * 1024;

/** The team's methods on messages, and the routed post a meeting's facade posts with. */
export function messageSide(parts: TeamParts) {
  const { deps, ready, store, channels, meetings, flows, queue, runner, agents, nameOf, now, emit, apps } =
    parts;

  /** The attachment parts of a post: files uploaded to this chat, at most the limit. */
  async function attachedParts(channelId: string, ids: readonly string[]): Promise<MessagePart[]> {
    checkFileCount(ids.length, deps.config.attachments);
    const parts: MessagePart[] = [];
    for (const id of ids) {
      const meta = await store.attachments.meta(channelId, id);
      if (!meta) throw invalid(`No file ${id} was uploaded to this chat.`, "upload it again, then send");
      parts.push({ type: "attachment", ...meta });
    }
    return parts;
  }

  async function postRouted(
    actor: Actor,
    channel: ChannelRecord,
    text: string,
    present: boolean,
    mode?: QueueMode,
    scheduled?: { scheduleId: string; name: string },
    files: MessagePart[] = [],
    messenger?: { platform: string; name: string },
  ): Promise<PostResult> {
    // Only agents the author may see answer them (a group's agents are visible to its members).
    const records = new Map((await agents.usable(actor)).map((a) => [a.id, a]));
    const route = routeMessage(text, channel, records, await nameOf(peopleIn(channel)));
    // During a meeting a message that names no agent is said in the meeting (the next speaker reads it).
    const interjection = route.kind === "agents" && (await meetings.interjection(channel, text, records));
    const targets = route.kind === "agents" && !interjection ? route.agents : [];
    const at = now();
    // The author has read their own post: stored with their marker moved to it, in one write.
    const message = await store.messages.insert(
      {
        channelId: channel.id,
        author: { type: "user", id: actor.userId },
        text,
        ...(scheduled || messenger || files.length > 0
          ? {
              parts: [
                { type: "text", text },
                ...(scheduled ? [{ type: "scheduled" as const, ...scheduled }] : []),
                ...(messenger ? [{ type: "messenger" as const, ...messenger }] : []),
                ...files,
              ] satisfies MessagePart[],
            }
          : {}),
        mentions: targets.map((a) => a.id),
        createdAt: at,
      },
      { readBy: actor.userId },
    );
    emit({ type: "message", channelId: channel.id, message });
    if (route.kind === "flow") {
      const flow = await flows.start(channel.id, message.id, channel.chain, route.input);
      const stepRun = flow.steps[flow.currentStep]?.runId;
      const started = stepRun ? (await store.runs.get(stepRun))?.run : undefined;
      return { message, runs: started ? [started] : [], flow };
    }
    const started: TeamRun[] = [];
    const queued: QueuedFor[] = [];
    for (const agent of targets) {
      const outcome = await queue.deliver(channel, agent, message, actor.userId, present, mode);
      if ("run" in outcome) started.push(outcome.run);
      else queued.push(outcome.queued);
    }
    return queued.length > 0 ? { message, runs: started, queued } : { message, runs: started };
  }

  function checkText(text: unknown): asserts text is string {
    if (typeof text !== "string" || text.trim() === "") throw invalid("A message needs some text.");
    if (Buffer.byteLength(text) > MAX_MESSAGE_BYTES) {
      throw invalid(
        `A message is limited to ${MAX_MESSAGE_BYTES / 1024} KB.`,
        "attach long text as a file instead",
      );
    }
  }

  async function requireMessage(messageId: number): Promise<ChannelMessage> {
    const message = Number.isInteger(messageId) ? await store.messages.get(messageId) : undefined;
    if (!message) throw notFound(`No message with id ${messageId}.`);
    return message;
  }

  /** Starts a new answer of `agentId` to `trigger`, as a new version of the answer `versionOf`. */
  async function answerAgain(
    actor: Actor,
    channel: ChannelRecord,
    trigger: ChannelMessage,
    agentId: string,
    versionOf: number,
    note: string,
  ): Promise<TeamRun> {
    if (!channel.members.some((m) => m.type === "agent" && m.id === agentId)) {
      throw invalid(`@${agentId} is no longer in this channel.`, "add the agent again to get a new answer");
    }
    const agent = await agents.require(agentId);
    return (
      await runner.startChannelRun(channel, agent, trigger, actor.userId, { versionOf, note, present: true })
    ).run;
  }

  const methods: Pick<
    Team,
    | "listMessages"
    | "markRead"
    | "postMessage"
    | "uploadAttachment"
    | "readAttachment"
    | "mcpAppResource"
    | "mcpAppCall"
    | "mcpAppDecide"
    | "deleteMessage"
    | "regenerate"
    | "editMessage"
    | "searchMessages"
  > = {
    listMessages: whenReady(ready, (actor, channelId, options) =>
      channels.messages(actor, channelId, options),
    ),
    markRead: whenReady(ready, (actor, channelId, messageId) =>
      channels.markRead(actor, channelId, messageId),
    ),
    async postMessage(actor, channelId, text, options = {}) {
      await ready;
      const channel = await channels.visible(actor, channelId);
      checkText(text);
      const files = await attachedParts(channel.id, options.attachments ?? []);
      const opened = await meetings.fromMessage(
        actor,
        channel,
        text,
        files.length > 0 ? [{ type: "text", text }, ...files] : undefined,
      );
      if (opened) return opened;
      return postRouted(
        actor,
        channel,
        text,
        options.present === true,
        options.mode,
        options.scheduled,
        files,
        options.messenger,
      );
    },
    async uploadAttachment(actor, channelId, name, data) {
      await ready;
      const channel = await channels.visible(actor, channelId);
      assertNotGuest(actor, "attach files");
      const clean = cleanFileName(name);
      const file = attachBytes(data, clean, deps.config.attachments);
      const id = createHash("sha256").update(data).digest("hex");
      return store.attachments.put(
        { id, mimeType: file.mimeType, kind: file.kind, data },
        { channelId: channel.id, name: clean, by: actor.userId, at: now() },
      );
    },
    async readAttachment(actor, channelId, id) {
      await ready;
      // Someone who may not read the chat learns nothing, not even that the chat exists.
      const channel = await channels.visible(actor, channelId).catch(() => undefined);
      const found = channel ? await store.attachments.read(channel.id, id) : undefined;
      if (!found) throw notFound("No such file in this chat.");
      return found;
    },
    mcpAppResource: whenReady(ready, (actor, ref) => apps.resource(actor, ref)),
    mcpAppCall: whenReady(ready, (actor, ref, name, args) => apps.call(actor, ref, name, args)),
    mcpAppDecide: whenReady(ready, (actor, ref, approvalId, decision) =>
      apps.decide(actor, ref, approvalId, decision),
    ),
    deleteMessage: whenReady(ready, (actor, messageId) => channels.deleteMessage(actor, messageId)),
    async regenerate(actor, messageId) {
      await ready;
      const answer = await requireMessage(messageId);
      const channel = await channels.visible(actor, answer.channelId);
      if (answer.author.type !== "agent" || answer.replyTo === undefined) {
        throw invalid("Only an agent's answer to a message can be regenerated.", "send the question again");
      }
      const trigger = await requireMessage(answer.replyTo);
      const run = await answerAgain(
        actor,
        channel,
        trigger,
        answer.author.id,
        answer.versionOf ?? answer.id,
        "(The person asked for another answer to this message; answer it afresh.)",
      );
      return { message: trigger, runs: [run] };
    },
    async editMessage(actor, messageId, text) {
      await ready;
      const original = await requireMessage(messageId);
      const channel = await channels.visible(actor, original.channelId);
      if (original.author.type !== "user" || original.author.id !== actor.userId) {
        throw forbidden("Only the author can edit a message.");
      }
      checkText(text);
      const later = await store.messages.list(channel.id, { after: original.id, limit: 200 });
      if (later.some((m) => m.author.type === "user" && m.author.id === actor.userId)) {
        throw conflict("Only your last message can be edited.", "send a new message instead");
      }
      const records = new Map((await store.agents.list()).map((a) => [a.id, a]));
      const names = await nameOf(peopleIn(channel));
      if (
        routeMessage(original.text, channel, records, names).kind === "flow" ||
        routeMessage(text, channel, records, names).kind === "flow"
      ) {
        throw conflict("A message that starts a flow cannot be edited.", "start the flow again with /flow");
      }
      // The new text replaces the old; the files attached (and a schedule's mark) stay with it.
      const kept = original.parts.filter((p) => p.type !== "text");
      const parts = kept.length > 0 ? [{ type: "text" as const, text }, ...kept] : undefined;
      const message = await store.messages.edit(original.id, text, now(), parts);
      if (!message) throw notFound(`No message with id ${messageId}.`);
      emit({ type: "message", channelId: channel.id, message });
      const heads = new Map<string, number>();
      for (const reply of await store.messages.replies(message.id)) {
        if (reply.author.type === "agent" && !heads.has(reply.author.id)) {
          heads.set(reply.author.id, reply.versionOf ?? reply.id);
        }
      }
      const started: TeamRun[] = [];
      const note = "(The person edited this message; answer the edited version.)";
      for (const [agentId, head] of heads) {
        started.push(await answerAgain(actor, channel, message, agentId, head, note));
      }
      if (heads.size === 0) {
        const route = routeMessage(text, channel, records, names);
        for (const agent of route.kind === "agents" ? route.agents : []) {
          started.push(
            (await runner.startChannelRun(channel, agent, message, actor.userId, { present: true })).run,
          );
        }
      }
      return { message, runs: started };
    },
    searchMessages: whenReady(ready, (actor, query, options) => channels.search(actor, query, options)),
  };
  return { methods, postRouted };
}
