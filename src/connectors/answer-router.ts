/**
 * Sends agents' answers back out: listens to the team's events, and for a channel that belongs to an
 * external chat streams the run's text into a preview (where the platform edits messages) and queues
 * the final answer, split to the platform's size, in the outbox. Answers are queued whether or not
 * the connector runs, so a stopped connector delivers them when it starts again.
 */
import { KeyedLock } from "../team/keyed-lock.js";
import { endPartOf } from "../team/message-parts.js";
import type { ChannelMessage, Team, TeamEvent, TeamRun } from "../team/types.js";
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
  onError(err: unknown): void;
}

/** Agent answers from connector channels to their external chats. */
export class AnswerRouter {
  readonly #deps: AnswerRouterDeps;
  readonly #chats = new Map<string, ChatRef | null>();
  /** Events of channels whose mapping is being looked up, in arrival order. */
  readonly #waiting = new Map<string, TeamEvent[]>();
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
  }

  #onEvent(event: TeamEvent): void {
    if (event.type !== "agent" && event.type !== "message" && event.type !== "run") return;
    const channelId = event.channelId;
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
        if (chat) for (const queued of queue) this.#route(chat, queued);
      },
      (err: unknown) => {
        this.#waiting.delete(channelId);
        this.#deps.onError(err);
      },
    );
  }

  #route(chat: ChatRef, event: TeamEvent): void {
    if (event.type !== "agent" && event.type !== "message" && event.type !== "run") return;
    if (event.type === "agent") {
      if (event.event.type !== "text_delta") return;
      const target = this.#deps.previewTarget(chat);
      if (target) this.#deps.previews.delta(event.runId, target, event.event.text);
      return;
    }
    // Events of one channel are handled in order: a preview settles before its answer is queued.
    const work =
      event.type === "message"
        ? () => this.#answer(chat, event.message)
        : () => this.#runEnded(chat, event.run);
    this.#lock.run(event.channelId, work).catch(this.#deps.onError);
  }

  async #answer(chat: ChatRef, message: ChannelMessage): Promise<void> {
    if (message.author.type !== "agent") return;
    // A failed or stopped answer is reported when its run ends (see #runEnded).
    if (endPartOf(message.parts)) return;
    const previewId = message.runId ? await this.#deps.previews.finish(message.runId) : undefined;
    await this.#queue(chat, message.text, previewId, message.runId);
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
  ): Promise<void> {
    const limit = await this.#deps.limitOf(chat.connectorId);
    if (!limit) return;
    const pieces = splitText(text.trim() === "" ? "(empty answer)" : text, limit);
    const messages = pieces.map((piece, i): OutboundMessage => {
      const out: OutboundMessage = { chatId: chat.chatId, text: piece, part: i + 1, parts: pieces.length };
      if (runId) out.runId = runId;
      if (i === 0 && previewId !== undefined) out.editMessageId = previewId;
      return out;
    });
    await this.#deps.enqueue(chat.connectorId, messages);
  }
}
