/**
 * What the instances of one team tell each other through the relay (Redis, see
 * store/redis/redis-relay.ts): every event emitted here (token deltas, tool events, run lifecycle,
 * messages, flows), which channels' people changed (each instance keeps them in memory to route
 * events), and requests only the instance running a run can serve (cancel it, answer its request
 * for input, list its open requests).
 */
import { randomUUID } from "node:crypto";
import { DimsumError, type ErrorCode, notFound, toDimsumError } from "../errors.js";
import type { MessageRelay } from "../store/redis/redis-relay.js";
import type { EventBus, MembershipIndex } from "./event-bus.js";
import type { ChannelRepository } from "./store/repositories.js";
import type { Actor, ElicitationAnswer, ElicitationView, TeamEvent } from "./types.js";

/** A question only the instance holding some live state can answer (the others stay silent). */
export type RelayQuestion = {
  kind: "answer_elicitation";
  actor: Actor;
  runId: string;
  id: string;
  answer: ElicitationAnswer;
};

/** A question every instance asked answers with what it holds (see `gather`). */
export type RelayPoll = { kind: "list_elicitations"; actor: Actor; channelId: string };

export type TeamRelayMessage =
  | { type: "event"; event: TeamEvent }
  | { type: "members"; channelId: string }
  | { type: "cancel_run"; runId: string; reason: string }
  | { type: "ask"; id: string; question: RelayQuestion }
  | {
      type: "reply";
      id: string;
      value?: ElicitationView;
      error?: { code: ErrorCode; message: string; hint?: string };
    }
  | { type: "poll"; id: string; to: readonly string[]; poll: RelayPoll }
  | { type: "polled"; id: string; from: string; views: ElicitationView[] };

export type TeamRelay = MessageRelay<TeamRelayMessage>;

export interface RelayWiring {
  bus: EventBus;
  members: MembershipIndex;
  channels: ChannelRepository;
  /** Cancels a run if it is live here (other instances ignore the request). */
  cancelRun: (runId: string, reason: string) => void;
  /** Answers a question if this instance holds what it is about; undefined: not here. */
  answer: (question: RelayQuestion) => ElicitationView | undefined;
  /** This instance's part of the answer to a poll. */
  poll: (poll: RelayPoll) => ElicitationView[];
  onError: (err: unknown) => void;
}

/** How long a question waits for the instance that can answer it. */
const ASK_TIMEOUT_MS = 3000;
/** How long a poll waits for the instances it asked (one that died meanwhile never answers). */
const POLL_TIMEOUT_MS = 1000;

export interface JoinedRelay {
  /** Puts a question to the other instances; rejects with 404 when none answers in time. */
  ask(question: RelayQuestion): Promise<ElicitationView>;
  /**
   * Asks the instances `to` (relay instance ids) and resolves with every answer that came within
   * the time limit: all of them, unless one died meanwhile.
   */
  gather(poll: RelayPoll, to: readonly string[]): Promise<ElicitationView[]>;
  leave(): void;
}

/** Joins this instance's bus and membership index to the relay. */
export function joinRelay(relay: TeamRelay, wiring: RelayWiring): JoinedRelay {
  const { bus, members, channels, onError } = wiring;
  const asked = new Map<
    string,
    { resolve: (v: ElicitationView) => void; reject: (e: DimsumError) => void }
  >();
  const polls = new Map<string, (from: string, views: ElicitationView[]) => void>();
  bus.forward = (event) => relay.publish({ type: "event", event });
  members.onChange = (channelId) => relay.publish({ type: "members", channelId });
  // Membership reloads run one at a time in arrival order, so an older read never wins.
  let reloads = Promise.resolve();
  const unsubscribe = relay.subscribe((message) => {
    switch (message.type) {
      case "event":
        bus.deliverRemote(message.event);
        return;
      case "members":
        reloads = reloads
          .then(async () => {
            const channel = await channels.get(message.channelId);
            members.replaceChannel(
              message.channelId,
              channel?.members.filter((m) => m.type === "user").map((m) => m.id),
            );
          })
          .catch(onError);
        return;
      case "cancel_run":
        wiring.cancelRun(message.runId, message.reason);
        return;
      case "ask": {
        let reply: TeamRelayMessage | undefined;
        try {
          const value = wiring.answer(message.question);
          if (value) reply = { type: "reply", id: message.id, value };
        } catch (err) {
          const error = toDimsumError(err);
          // A refusal here (not the asker's request) is an answer; "not found" means not here.
          if (error.code !== "not_found") {
            reply = {
              type: "reply",
              id: message.id,
              error: {
                code: error.code,
                message: error.message,
                ...(error.hint ? { hint: error.hint } : {}),
              },
            };
          }
        }
        if (reply) relay.publish(reply);
        return;
      }
      case "poll":
        if (!message.to.includes(relay.instanceId)) return;
        try {
          const views = wiring.poll(message.poll);
          relay.publish({ type: "polled", id: message.id, from: relay.instanceId, views });
        } catch (err) {
          onError(err);
        }
        return;
      case "polled":
        polls.get(message.id)?.(message.from, message.views);
        return;
      case "reply": {
        const waiter = asked.get(message.id);
        if (!waiter) return;
        asked.delete(message.id);
        if (message.value) waiter.resolve(message.value);
        else if (message.error) {
          const { code, message: text, hint } = message.error;
          waiter.reject(new DimsumError(code, text, hint ? { hint } : {}));
        }
        return;
      }
    }
  });
  return {
    ask(question) {
      const id = randomUUID();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          asked.delete(id);
          reject(notFound(`No open request for input with id "${question.id}" in run "${question.runId}".`));
        }, ASK_TIMEOUT_MS);
        timer.unref();
        const settle = {
          resolve: (v: ElicitationView) => {
            clearTimeout(timer);
            resolve(v);
          },
          reject: (e: DimsumError) => {
            clearTimeout(timer);
            reject(e);
          },
        };
        asked.set(id, settle);
        relay.publish({ type: "ask", id, question });
      });
    },
    gather(poll, to) {
      const id = randomUUID();
      const waiting = new Set(to);
      const views: ElicitationView[] = [];
      if (waiting.size === 0) return Promise.resolve(views);
      return new Promise((resolve) => {
        const finish = () => {
          clearTimeout(timer);
          polls.delete(id);
          resolve(views);
        };
        const timer = setTimeout(finish, POLL_TIMEOUT_MS);
        timer.unref();
        polls.set(id, (from, part) => {
          if (!waiting.delete(from)) return;
          views.push(...part);
          if (waiting.size === 0) finish();
        });
        relay.publish({ type: "poll", id, to: [...waiting], poll });
      });
    },
    leave() {
      unsubscribe();
      bus.forward = undefined;
      members.onChange = undefined;
      for (const waiter of asked.values())
        waiter.reject(new DimsumError("aborted", "The server is shutting down."));
      asked.clear();
    },
  };
}
