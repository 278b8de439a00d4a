/**
 * Sends agents' answers back out: listens to the team's events, and for a channel that belongs to an
 * external chat streams the run's text into a preview (where the platform edits messages) and queues
 * the final answer, split to the platform's size, in the outbox. Answers are queued whether or not
 * the connector runs, so a stopped connector delivers them when it starts again. Tool calls waiting
 * for approval are asked in the chat with buttons, and their prompts settled as they are decided
 * (see `approval-buttons.ts`).
 */
import type { AgentEvent } from "../agent/events.js";
import { KeyedLock } from "../team/keyed-lock.js";
import { endPartOf } from "../team/message-parts.js";
import type { ChannelMessage, Team, TeamEvent, TeamRun } from "../team/types.js";
import type { ApprovalButtons } from "./approval-buttons.js";
import type { FlowCards } from "./flow-cards.js";
import type { MessageOrigins } from "./message-origins.js";
import { SPEAKER_ROOM } from "./speaker-label.js";
import { splitText } from "./split-text.js";
import type { MappingRepo } from "./store/mapping-repo.js";
import type { PreviewStreams, PreviewTarget } from "./stream-preview.js";
import type { OutboundMessage } from "./types.js";

/** Who listens to every channel's events (an admin sees all channels). */
const LISTENER = { userId: "connector:router", role: "admin" } as const;

export interface ChatRef {
  connectorId: string;
  chatId: string;
}

export interface AnswerRouterDeps {
  team: Team;
  mappings: MappingRepo;
  previews: PreviewStreams;
  /** Where a running connector streams previews (undefined: stopped, or no streaming). */
  previewTarget(chat: ChatRef): PreviewTarget | undefined;
  /** The message size of a connector's platform (undefined once the connector is gone). */
  limitOf(connectorId: string): Promise<PreviewTarget["limit"] | undefined>;
  /** Queues messages in the outbox and wakes the connector's worker. */
  enqueue(connectorId: string, messages: OutboundMessage[]): Promise<void>;
  /** Approval prompts with buttons (absent: none are asked in chats). */
  approvals?: ApprovalButtons;
  /** Flow progress cards (absent: flows show only their steps' answers). */
  flows?: FlowCards;
  /** Messages posted from external chats (the others, from the web, are mirrored to bound groups). */
  origins?: MessageOrigins;
  /** Whether web messages of a chat's group are posted to it. */
  mirrors?(chat: ChatRef): Promise<boolean>;
  /** A person's display name. */
  nameOf?(userId: string): Promise<string | undefined>;
  now?: () => number;
  onError(err: unknown): void;
}

/** How long a channel's chat is remembered before it is looked up again (binding on another instance). */
const CHAT_TTL_MS = 5000;

type RoutedEvent = Extract<TeamEvent, { type: "agent" | "message" | "run" | "approval" | "flow" }>;

function routed(event: TeamEvent): event is RoutedEvent {
  return (
    event.type === "agent" ||
    event.type === "message" ||
    event.type === "run" ||
    event.type === "approval" ||
    event.type === "flow"
  );
}

/** The files an agent shared in its answer (share_file), as messages after the answer's text. */
function filesOf(
  chat: ChatRef,
  message: ChannelMessage,
  speaker: OutboundMessage["speaker"],
): OutboundMessage[] {
  const out: OutboundMessage[] = [];
  for (const part of message.parts) {
    if (part.type !== "attachment") continue;
    const { id, name, mimeType, kind } = part;
    out.push({
      chatId: chat.chatId,
      text: `📎 ${name} (open the chat in Dimsum to download it)`,
      part: 1,
      parts: 1,
      ...(message.runId ? { runId: message.runId } : {}),
      ...(speaker ? { speaker } : {}),
      file: { channelId: message.channelId, id, name, mimeType, kind },
    });
  }
  return out;
}

/** Agent answers from connector channels to their external chats. */
export class AnswerRouter {
  readonly #deps: AnswerRouterDeps;
  readonly #chats = new Map<string, ChatRef | null>();
  /** When each remembered chat is looked up again. */
  readonly #until = new Map<string, number>();
  /** Events of channels whose mapping is being looked up, in arrival order. */
  readonly #waiting = new Map<string, RoutedEvent[]>();
  readonly #lock = new KeyedLock();
  #unsubscribe: (() => void) | undefined;

  constructor(deps: AnswerRouterDeps) {
    this.#deps = deps;
  }

  start(): void {
    // Only this instance's runs: another instance's answer is sent out by that instance.
    this.#unsubscribe ??= this.#deps.team.subscribe(LISTENER, (event) => this.#onEvent(event), {
      local: true,
    });
  }

  stop(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
  }

  /** A channel now belongs to an external chat. */
  remember(channelId: string, chat: ChatRef): void {
    this.#chats.set(channelId, chat);
    this.#until.set(channelId, this.#now() + CHAT_TTL_MS);
  }

  /** A channel no longer belongs to an external chat. */
  forget(channelId: string): void {
    this.#chats.set(channelId, null);
    this.#until.set(channelId, this.#now() + CHAT_TTL_MS);
  }

  #now(): number {
    return (this.#deps.now ?? Date.now)();
  }

  #onEvent(event: TeamEvent): void {
    if (!routed(event)) return;
    if (event.type === "agent" && event.event.type !== "text_delta" && event.event.type !== "approval")
      return;
    // A press here answered it: the press shows the decision on the prompt itself.
    if (event.type === "approval" && this.#deps.approvals?.pressing(event.runId, event.callId)) return;
    const channelId = event.channelId;
    if ((this.#until.get(channelId) ?? 0) <= this.#now() && !this.#waiting.has(channelId)) {
      this.#chats.delete(channelId);
    }
    const known = this.#chats.get(channelId);
    if (known !== undefined) {
      if (known) this.#route(known, event);
      return;
    }
    // The first event of a channel looks its mapping up; events arriving meanwhile wait in order.
    const waiting = this.#waiting.get(channelId);
    if (waiting) {
      waiting.push(event);
      return;
    }
    const queue = [event];
    this.#waiting.set(channelId, queue);
    this.#deps.mappings.chatOf(channelId).then(
      (found) => {
        this.#waiting.delete(channelId);
        // A mapping remembered while looking wins over what the lookup read before it was stored.
        const chat = this.#chats.get(channelId) ?? found ?? null;
        this.#chats.set(channelId, chat);
        this.#until.set(channelId, this.#now() + CHAT_TTL_MS);
        if (chat) for (const queued of queue) this.#route(chat, queued);
      },
      (err: unknown) => {
        this.#waiting.delete(channelId);
        this.#deps.onError(err);
      },
    );
  }

  #route(chat: ChatRef, event: RoutedEvent): void {
    const approvals = this.#deps.approvals;
    let work: () => Promise<void>;
    if (event.type === "agent") {
      const inner = event.event;
      if (inner.type === "text_delta") {
        const target = this.#deps.previewTarget(chat);
        if (target) this.#deps.previews.delta(event.runId, target, inner.text);
        return;
      }
      if (inner.type !== "approval" || inner.state !== "requested" || !approvals) return;
      work = () => this.#ask(chat, approvals, inner);
    } else if (event.type === "approval") {
      if (!approvals) return;
      work = () => approvals.decided(chat, event);
    } else if (event.type === "flow") {
      const flows = this.#deps.flows;
      if (!flows) return;
      work = () => flows.changed(chat, event.flow);
    } else if (event.type === "message") {
      work = () => this.#answer(chat, event.message);
    } else {
      work = async () => {
        await this.#runEnded(chat, event.run);
        await approvals?.runEnded(chat, event.run);
      };
    }
    // Events of one channel are handled in order: a preview settles before its answer is queued.
    this.#lock.run(event.channelId, work).catch(this.#deps.onError);
  }

  /** A call waits for approval: the text so far stays as it is, and the prompt goes out below it. */
  async #ask(
    chat: ChatRef,
    approvals: ApprovalButtons,
    event: Extract<AgentEvent, { type: "approval" }>,
  ): Promise<void> {
    // The answer goes on after the decision in a new preview below the prompt, where it is seen.
    await this.#deps.previews.finish(event.runId, { settle: true });
    await approvals.ask(chat, event);
  }

  async #answer(chat: ChatRef, message: ChannelMessage): Promise<void> {
    if (message.author.type === "user") {
      await this.#mirror(chat, message);
      return;
    }
    if (message.author.type !== "agent") return;
    // A failed or stopped answer is reported when its run ends (see #runEnded).
    if (endPartOf(message.parts)) return;
    // An answer paused for approval (or updated with a decision) is not finished: its card asks below
    // the text so far, and the answer goes out once, when it ends.
    if (message.parts.some((p) => p.type === "tool" && (p.status === "waiting" || p.status === "running"))) {
      return;
    }
    const previewId = message.runId ? await this.#deps.previews.finish(message.runId) : undefined;
    const speaker = (await this.#isGroup(message.channelId))
      ? await this.#agentLabel(message.author.id)
      : undefined;
    await this.#queue(chat, message.text, previewId, message.runId, speaker);
    await this.#deps.enqueue(chat.connectorId, filesOf(chat, message, speaker));
  }

  /** A web message in a bound group goes to the external chat too, labelled with the person's name. */
  async #mirror(chat: ChatRef, message: ChannelMessage): Promise<void> {
    const { origins, mirrors, nameOf } = this.#deps;
    if (!origins || !mirrors) return;
    if (origins.take(message.channelId, message.author.id, message.text)) return;
    if (!(await this.#isGroup(message.channelId)) || !(await mirrors(chat))) return;
    const name = (await nameOf?.(message.author.id)) ?? message.author.id;
    await this.#queue(chat, message.text, undefined, undefined, { name, emoji: "💬" });
  }

  async #isGroup(channelId: string): Promise<boolean> {
    try {
      return (await this.#deps.team.getChannel(LISTENER, channelId)).kind === "group";
    } catch {
      return false;
    }
  }

  async #agentLabel(agentId: string): Promise<OutboundMessage["speaker"]> {
    try {
      const agent = await this.#deps.team.getAgent(LISTENER, agentId);
      return { name: agent.name, emoji: agent.emoji };
    } catch {
      return { name: agentId };
    }
  }

  async #runEnded(chat: ChatRef, run: TeamRun): Promise<void> {
    // Nested call_agent runs report to their caller, not to the chat.
    if (run.depth > 0 || (run.status !== "error" && run.status !== "cancelled")) return;
    const previewId = await this.#deps.previews.finish(run.id);
    if (run.status === "cancelled" && previewId === undefined) return;
    const why = run.status === "error" ? (run.error ?? "the run failed") : "the run was cancelled";
    await this.#queue(chat, `⚠️ @${run.agentId} could not answer: ${why}`, previewId, run.id);
  }

  async #queue(
    chat: ChatRef,
    text: string,
    previewId: string | undefined,
    runId: string | undefined,
    speaker?: OutboundMessage["speaker"],
  ): Promise<void> {
    const limit = await this.#deps.limitOf(chat.connectorId);
    if (!limit) return;
    const room = speaker ? { ...limit, max: Math.max(limit.max - SPEAKER_ROOM, 200) } : limit;
    const pieces = splitText(text.trim() === "" ? "(empty answer)" : text, room);
    const messages = pieces.map((piece, i): OutboundMessage => {
      const out: OutboundMessage = { chatId: chat.chatId, text: piece, part: i + 1, parts: pieces.length };
      if (runId) out.runId = runId;
      if (speaker) out.speaker = speaker;
      if (i === 0 && previewId !== undefined) out.editMessageId = previewId;
      return out;
    });
    await this.#deps.enqueue(chat.connectorId, messages);
  }
}
