/** Shared by the stream-resume tests: a slow answer, frames of one run, and the web client over `ws`. */
import { WebSocket } from "ws";
import type { TeamEvent } from "../../src/team/types.js";
import { type CreateSocket, WsClient } from "../../web/src/ws.js";
import type { Frame, TestClient } from "./ws-helpers.js";

/** A long answer: many small chunks, spaced out by the fake LLM, stream as many agent events. */
export const LONG_ANSWER = Array.from({ length: 100 }, (_, i) => `w${i}`).join(" ");

export type AgentFrame = Extract<TeamEvent, { type: "agent" }>;

/** The agent frames of one run, in the order received. */
export function agentFrames(frames: readonly Frame[] | readonly unknown[], runId: string): AgentFrame[] {
  return (frames as Frame[]).filter(
    (f): boolean => f.type === "agent" && (f as unknown as AgentFrame).runId === runId,
  ) as unknown as AgentFrame[];
}

/** The text the deltas of these frames spell. */
export function textOf(frames: readonly AgentFrame[]): string {
  return frames.map((f) => (f.event.type === "text_delta" ? f.event.text : "")).join("");
}

/** 1..n */
export function oneTo(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i + 1);
}

/** Waits until `test` holds, polling every 5 ms. */
export async function until(test: () => boolean, timeoutMs = 10_000, what = "a condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** The frame of a run reaching an end. */
export const runEnded = (runId: string) => (f: Frame) =>
  f.type === "run" &&
  (f.run as { id: string }).id === runId &&
  ["done", "error", "cancelled"].includes((f.run as { status: string }).status);

/** The highest agent seq of a run a test client holds. */
export function lastSeqOf(client: TestClient, runId: string): number {
  return Math.max(0, ...agentFrames(client.frames, runId).map((f) => f.seq));
}

/**
 * The web UI's WebSocket client (web/src/ws.ts) on Node's `ws`, signed in by a session cookie. The
 * n-th connection goes to `urls[min(n, last)]`, so a reconnect may land on another instance.
 */
export function webClient(urls: string[], cookie: string, channelId: string) {
  const frames: Frame[] = [];
  const sent: Array<Record<string, unknown>> = [];
  const sockets: WebSocket[] = [];
  const createSocket: CreateSocket = (_url, handlers) => {
    const base = urls[Math.min(sockets.length, urls.length - 1)] as string;
    const ws = new WebSocket(`${base.replace(/^http/, "ws")}/ws`, { headers: { cookie } });
    sockets.push(ws);
    ws.on("open", () => handlers.onOpen());
    ws.on("message", (data) => handlers.onMessage(data.toString()));
    ws.on("close", (code, reason) => handlers.onClose(code, reason.toString()));
    ws.on("error", () => undefined);
    return {
      send: (data) => {
        sent.push(JSON.parse(data) as Record<string, unknown>);
        ws.send(data);
      },
      close: (code, reason) => ws.close(code, reason),
    };
  };
  const client = new WsClient({
    url: "ws://unused/ws",
    createSocket,
    onFrame: (frame) => frames.push(frame as unknown as Frame),
    // Reconnect after exactly 200 ms: long enough for the answer to go on meanwhile.
    backoffBaseMs: 200,
    backoffMaxMs: 200,
    random: () => 1,
  });
  client.subscribe(channelId);
  client.connect();
  return {
    client,
    frames,
    sent,
    sockets,
    /** Cuts the current connection as a network failure would (the client reconnects by itself). */
    drop(): void {
      sockets.at(-1)?.terminate();
    },
    close(): void {
      client.close();
    },
  };
}
