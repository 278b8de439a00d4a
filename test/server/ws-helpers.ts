/** An in-memory team event source and a WebSocket test client for the hub tests. */
import { WebSocket } from "ws";
import { forbidden, notFound } from "../../src/errors.js";
import type { TeamEventSource } from "../../src/server/ws/protocol.js";
import type { Actor, ChannelMessage, ChannelRecord, TeamEvent } from "../../src/team/types.js";

/** Channels with user members and messages; events reach only listeners who may see the channel. */
export class FakeTeam implements TeamEventSource {
  private readonly channels = new Map<string, { record: ChannelRecord; messages: ChannelMessage[] }>();
  private readonly listeners = new Set<{ actor: Actor; listener: (event: TeamEvent) => void }>();
  private nextId = 1;
  /** When set, listMessages waits for it (lets a test emit events while a backlog loads). */
  gate: Promise<void> | undefined;
  /** When set, getChannel waits for it (lets a test act while the hub checks a channel's rights). */
  channelGate: Promise<void> | undefined;
  listCalls: Array<{
    channelId: string;
    options: { before?: number; after?: number; limit?: number } | undefined;
  }> = [];

  addChannel(id: string, userIds: string[]): ChannelRecord {
    const record: ChannelRecord = {
      id,
      kind: "group",
      name: id,
      members: userIds.map((u) => ({ type: "user", id: u })),
      chain: [],
      createdBy: userIds[0] ?? "nobody",
      createdAt: 1,
      updatedAt: 1,
    };
    this.channels.set(id, { record, messages: [] });
    return record;
  }

  private maySee(actor: Actor, channelId: string): boolean {
    const channel = this.channels.get(channelId);
    if (!channel) return false;
    if (actor.role === "owner" || actor.role === "admin") return true;
    return channel.record.members.some((m) => m.type === "user" && m.id === actor.userId);
  }

  async getChannel(actor: Actor, id: string): Promise<ChannelRecord> {
    if (this.channelGate) await this.channelGate;
    const channel = this.channels.get(id);
    if (!channel) throw notFound(`channel ${id} not found`);
    if (!this.maySee(actor, id)) throw forbidden(`you are not a member of channel ${id}`);
    return channel.record;
  }

  async listChannels(actor: Actor): Promise<Array<ChannelRecord & { unread: number }>> {
    return [...this.channels.values()]
      .filter((c) => this.maySee(actor, c.record.id))
      .map((c) => ({ ...c.record, unread: 0 }));
  }

  async listMessages(
    actor: Actor,
    channelId: string,
    options?: { before?: number; after?: number; limit?: number },
  ): Promise<ChannelMessage[]> {
    this.listCalls.push({ channelId, options });
    await this.getChannel(actor, channelId);
    const snapshot = () => {
      let list = this.channels.get(channelId)?.messages ?? [];
      if (options?.after !== undefined) list = list.filter((m) => m.id > (options.after ?? 0));
      return options?.limit !== undefined ? list.slice(-options.limit) : list;
    };
    if (this.gate) {
      await this.gate;
    }
    return snapshot();
  }

  subscribe(actor: Actor, listener: (event: TeamEvent) => void): () => void {
    const entry = { actor, listener };
    this.listeners.add(entry);
    return () => this.listeners.delete(entry);
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  /** Delivers an event to every listener allowed to see its channel. */
  emit(event: TeamEvent): void {
    for (const { actor, listener } of this.listeners)
      if (this.maySee(actor, event.channelId)) listener(event);
  }

  /** Delivers an event to every listener, skipping the access filter (a buggy source). */
  emitToAll(event: TeamEvent): void {
    for (const { listener } of this.listeners) listener(event);
  }

  /** Stores a message and emits it. */
  post(channelId: string, text: string, emit = true): ChannelMessage {
    const message: ChannelMessage = {
      id: this.nextId++,
      channelId,
      author: { type: "user", id: "someone" },
      text,
      parts: [{ type: "text", text }],
      mentions: [],
      createdAt: Date.now(),
    };
    this.channels.get(channelId)?.messages.push(message);
    if (emit) this.emit({ type: "message", channelId, message });
    return message;
  }
}

export type Frame = { type: string; [key: string]: unknown };

/** A team event carrying an agent's text delta. */
let deltaSeq = 0;
export function textDelta(channelId: string, runId: string, text: string): TeamEvent {
  return { type: "agent", channelId, runId, seq: ++deltaSeq, event: { type: "text_delta", runId, text } };
}

/** Whether a frame is an agent's text delta. */
export function isDelta(frame: Frame): boolean {
  return frame.type === "agent" && (frame.event as { type?: string } | undefined)?.type === "text_delta";
}

/** The text of a delta frame. */
export function deltaText(frame: Frame): string {
  return String((frame.event as { text?: unknown } | undefined)?.text ?? "");
}

/** A WebSocket client that records frames and lets a test wait for the next matching one. */
export class TestClient {
  readonly frames: Frame[] = [];
  private waiters: Array<{ match: (f: Frame) => boolean; resolve: (f: Frame) => void }> = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly opened: Promise<void>;
  pings = 0;

  constructor(readonly ws: WebSocket) {
    this.opened = new Promise((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    this.closed = new Promise((resolve) => {
      ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() }));
    });
    ws.on("ping", () => {
      this.pings++;
    });
    ws.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as Frame;
      this.frames.push(frame);
      for (const waiter of [...this.waiters]) {
        if (waiter.match(frame)) {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          waiter.resolve(frame);
        }
      }
    });
  }

  /** The first frame (already received or coming) that matches. */
  next(match: (f: Frame) => boolean): Promise<Frame> {
    const seen = this.frames.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === "string" ? frame : JSON.stringify(frame));
  }
}

/** Opens a socket to the server's /ws with optional headers. */
export function connect(
  base: string,
  headers: Record<string, string> = {},
  options: { autoPong?: boolean } = {},
): TestClient {
  const url = `${base.replace(/^http/, "ws")}/ws`;
  return new TestClient(new WebSocket(url, { headers, autoPong: options.autoPong ?? true }));
}
