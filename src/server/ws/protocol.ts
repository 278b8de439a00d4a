/** WebSocket frames: what clients send (validated) and what the server sends besides TeamEvents. */
import * as z from "zod";
import type { ChannelMessage, Team } from "../../team/types.js";

/** The part of the team facade the hub needs; tests supply a small in-memory one. */
export type TeamEventSource = Pick<Team, "getChannel" | "listChannels" | "listMessages" | "subscribe">;

/** Runs one `subscribe` frame may resume. */
export const MAX_RESUMED_RUNS = 100;

export const clientFrameSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("auth"), token: z.string().min(1).max(300) }),
  z.object({
    type: z.literal("subscribe"),
    channelId: z.string().min(1).max(200),
    since: z.number().int().nonnegative().optional(),
    /** Live runs of the channel the client follows: run id → the last agent event seq it has. */
    runs: z
      .record(z.string().min(1).max(200), z.number().int().nonnegative())
      .refine((runs) => Object.keys(runs).length <= MAX_RESUMED_RUNS, {
        message: `at most ${MAX_RESUMED_RUNS} runs to resume`,
      })
      .optional(),
  }),
  z.object({ type: z.literal("unsubscribe"), channelId: z.string().min(1).max(200) }),
  /** Hear of new messages and approval requests in every channel one may see, without following them. */
  z.object({ type: z.literal("watch") }),
  z.object({ type: z.literal("ping") }),
]);

export type ClientFrame = z.output<typeof clientFrameSchema>;

export type ServerFrame =
  | { type: "ready"; user: { id: string; role: string } }
  | { type: "backlog"; channelId: string; messages: ChannelMessage[] }
  /**
   * Sent in answer to a subscribe's `runs` when a run's events after `after` cannot all be sent
   * again: those from `resumesAt` on follow (when given); the rest should be loaded over HTTP (the
   * run's live answer, or its message once it ended).
   */
  | { type: "run_gap"; channelId: string; runId: string; after: number; resumesAt?: number }
  | { type: "pong" }
  /** The account's role changed; the socket now carries these rights. */
  | { type: "reauthorized"; user: { id: string; role: string } }
  /** A subscription the caller's new rights no longer cover was dropped. */
  | { type: "unsubscribed"; channelId: string; message: string; code?: string }
  | { type: "error"; message: string; channelId?: string; code?: string };

/** Close codes the hub uses (4xxx are application codes; 1001 is a normal shutdown). */
export const CloseCode = {
  unauthenticated: 4401,
  tooSlow: 4408,
  goingAway: 1001,
} as const;
