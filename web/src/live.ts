/**
 * Glue between the WebSocket client and the store: frames become actions, the open channel is the
 * one followed, and after a reconnect whatever may have been missed (finished runs, unread counts)
 * is fetched again. Every (re)subscription names the open chat's live runs with the last event seq
 * applied of each, so the server sends what they said meanwhile (applied like live events); a run
 * whose missed events it no longer has is loaded again. Runs or flows first seen through stream
 * events are looked up once over HTTP.
 */
import { type ApiClient, errorText } from "./api.js";
import type { AppAction, AppState } from "./state/app.js";
import { activeRuns, lastMessageId } from "./state/chat.js";
import type { Store } from "./state/store.js";
import type { ServerFrame } from "./types.js";
import { type CreateSocket, type RunGapFrame, WsClient, type WsStatus } from "./ws.js";

export interface LiveOptions {
  url: string;
  createSocket: CreateSocket;
  /** Called when the server refuses or ends the socket's session (close 4401), with its reason. */
  onUnauthorized: (reason: string) => void;
  /** Called when the open channel was dropped because the user lost access to it (leave the page). */
  onChannelLost?: (channelId: string) => void;
  /** Hears each frame before it applies, with the state it applies to (notifications). */
  onFrame?: (frame: ServerFrame, before: AppState) => void;
}

/** One per logged-in session: `start` on login, `stop` on logout. */
export class LiveConnection {
  private readonly api: ApiClient;
  private readonly store: Store<AppState, AppAction>;
  private readonly options: LiveOptions;
  private client: WsClient | undefined;
  private followed: string | undefined;
  private wasOpen = false;
  private readonly requested = new Set<string>();

  constructor(api: ApiClient, store: Store<AppState, AppAction>, options: LiveOptions) {
    this.api = api;
    this.store = store;
    this.options = options;
  }

  /** Connects (idempotent). */
  start(): void {
    if (this.client) return;
    this.wasOpen = false;
    this.client = new WsClient({
      url: this.options.url,
      createSocket: this.options.createSocket,
      onFrame: (frame) => this.handleFrame(frame),
      onStatus: (status, detail) => this.handleStatus(status, detail.reason ?? ""),
      sinceFor: (channelId) => {
        const chat = this.store.getState().chat;
        if (chat?.channelId !== channelId || !chat.loaded) return undefined;
        // History loaded and empty: everything after 0 is new, so ask for it rather than nothing.
        return lastMessageId(chat) ?? 0;
      },
      runsFor: (channelId) => {
        const chat = this.store.getState().chat;
        if (chat?.channelId !== channelId) return undefined;
        // The runs shown streaming; one known only from its stored answer (seq unknown) is loaded instead.
        const runs: Record<string, number> = {};
        for (const view of activeRuns(chat)) if (view.seq !== undefined) runs[view.id] = view.seq;
        return runs;
      },
      onRunGap: (gap) => this.handleRunGap(gap),
      // Every chat's new messages: live unread counts in the sidebar, and notifications.
      watch: true,
    });
    if (this.followed) this.client.subscribe(this.followed);
    this.client.connect();
  }

  /** Disconnects and forgets the followed channel. */
  stop(): void {
    this.client?.close();
    this.client = undefined;
    this.followed = undefined;
    this.requested.clear();
  }

  /** Follows one channel (or none); the previous one is unsubscribed. */
  follow(channelId: string | undefined): void {
    if (channelId === this.followed) return;
    if (this.followed) this.client?.unsubscribe(this.followed);
    this.followed = channelId;
    if (channelId) this.client?.subscribe(channelId);
  }

  /** Looks a run's flow up once, so the flow panel shows flows started before this page load. */
  discoverRun(runId: string): void {
    if (this.requested.has(`run:${runId}`)) return;
    this.requested.add(`run:${runId}`);
    this.api
      .getRun(runId)
      .then((run) => {
        this.store.dispatch({ type: "run", run });
        if (run.flowId) this.discoverFlow(run.flowId);
      })
      .catch(() => this.requested.delete(`run:${runId}`));
  }

  private discoverFlow(flowId: string): void {
    const chat = this.store.getState().chat;
    if (chat?.flows[flowId] || this.requested.has(`flow:${flowId}`)) return;
    this.requested.add(`flow:${flowId}`);
    this.api
      .getFlow(flowId)
      .then((flow) => this.store.dispatch({ type: "flow", flow }))
      .catch(() => this.requested.delete(`flow:${flowId}`));
  }

  private handleFrame(frame: ServerFrame): void {
    const before = this.store.getState();
    const wasOpen = frame.type === "unsubscribed" && before.chat?.channelId === frame.channelId;
    try {
      this.options.onFrame?.(frame, before);
    } catch {
      // A notification that fails must never cost the chat its event.
    }
    this.store.dispatch({ type: "frame", frame });
    if (frame.type === "reauthorized") {
      // Other rights, other channels: the list is fetched again (new ones appear, lost ones go).
      this.refreshChannels();
      return;
    }
    if (frame.type === "unsubscribed") {
      // The server dropped it already; forget it here too so a reconnect does not ask again.
      if (this.followed === frame.channelId) this.follow(undefined);
      if (wasOpen) this.options.onChannelLost?.(frame.channelId);
      return;
    }
    const chat = this.store.getState().chat;
    if (!chat || !("channelId" in frame) || frame.channelId !== chat.channelId) return;
    if (frame.type === "run" && frame.run.flowId) this.discoverFlow(frame.run.flowId);
    if (frame.type === "agent" && frame.event.type === "resumed" && frame.event.reason === "restart") {
      // A new process took the run over: its own copy of the answer so far is the one to follow.
      this.api
        .getRun(frame.runId)
        .then((run) => this.store.dispatch({ type: "run", run }))
        .catch(() => undefined);
    } else if ("runId" in frame && !chat.runs[frame.runId]?.run) {
      // Stream events of a run that started before we subscribed: fetch the run itself.
      this.discoverRun(frame.runId);
    }
  }

  /** Some missed events of a resumed run are gone from the server's log: its live answer is loaded again. */
  private handleRunGap(gap: RunGapFrame): void {
    if (this.store.getState().chat?.channelId !== gap.channelId) return;
    this.api
      .getRun(gap.runId)
      .then((run) => this.store.dispatch({ type: "run", run }))
      .catch(() => undefined);
  }

  private handleStatus(status: WsStatus, reason: string): void {
    this.store.dispatch({ type: "connection", status });
    if (status === "unauthorized") {
      this.options.onUnauthorized(reason);
      return;
    }
    if (status !== "open") return;
    if (this.wasOpen) this.refreshAfterReconnect();
    this.wasOpen = true;
  }

  private refreshChannels(): void {
    this.api
      .listChannels()
      .then((list) => this.store.dispatch({ type: "channels_loaded", list }))
      .catch((err: unknown) => this.store.dispatch({ type: "notice", kind: "error", text: errorText(err) }));
  }

  private refreshAfterReconnect(): void {
    this.refreshChannels();
    const chat = this.store.getState().chat;
    if (!chat) return;
    // A run that ended while we were away sent its final lifecycle event into the void.
    for (const view of activeRuns(chat)) {
      this.api
        .getRun(view.id)
        .then((run) => this.store.dispatch({ type: "run", run }))
        .catch(() => undefined);
    }
  }
}
