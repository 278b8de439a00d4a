/**
 * What the instances of one team tell each other through the relay (Redis, see
 * store/redis/redis-relay.ts): every event emitted here (token deltas, tool events, run lifecycle,
 * messages, flows), which channels' people changed (each instance keeps them in memory to route
 * events), and requests only the instance running a run can serve (cancel it).
 */
import type { MessageRelay } from "../store/redis/redis-relay.js";
import type { EventBus, MembershipIndex } from "./event-bus.js";
import type { ChannelRepository } from "./store/repositories.js";
import type { TeamEvent } from "./types.js";

export type TeamRelayMessage =
  | { type: "event"; event: TeamEvent }
  | { type: "members"; channelId: string }
  | { type: "cancel_run"; runId: string; reason: string };

export type TeamRelay = MessageRelay<TeamRelayMessage>;

export interface RelayWiring {
  bus: EventBus;
  members: MembershipIndex;
  channels: ChannelRepository;
  /** Cancels a run if it is live here (other instances ignore the request). */
  cancelRun: (runId: string, reason: string) => void;
  onError: (err: unknown) => void;
}

/** Joins this instance's bus and membership index to the relay; returns the function that leaves. */
export function joinRelay(relay: TeamRelay, wiring: RelayWiring): () => void {
  const { bus, members, channels, onError } = wiring;
  bus.forward = (event) => relay.publish({ type: "event", event });
  members.onChange = (channelId) => relay.publish({ type: "members", channelId });
  // Membership reloads run one at a time in arrival order, so an older read never wins.
  let reloads = Promise.resolve();
  const unsubscribe = relay.subscribe((message) => {
    switch (message.type) {
      case "event":
        bus.deliver(message.event);
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
    }
  });
  return () => {
    unsubscribe();
    bus.forward = undefined;
    members.onChange = undefined;
  };
}
