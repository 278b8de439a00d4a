/**
 * Auth events between the instances sharing one database: what ends a session, changes a role or
 * deletes an account on one instance is told to every other one through a relay (Redis pub/sub, see
 * store/redis/redis-relay.ts), so their WebSocket hubs close or re-authorise sockets at once instead
 * of at their next heartbeat. The requests themselves never depend on it: every instance reads the
 * session from the database on each request.
 */
import type { MessageRelay } from "../../store/redis/redis-relay.js";
import type { AuthEvent, AuthEvents } from "./auth-events.js";

/** Publishes this instance's auth events and replays the others' into `events`; returns the function that stops. */
export function relayAuthEvents(events: AuthEvents, relay: MessageRelay<AuthEvent>): () => void {
  // An event replayed from the relay is not published again (that would bounce between instances).
  let replaying = false;
  const stopLocal = events.on((event) => {
    if (!replaying) relay.publish(event);
  });
  const stopRemote = relay.subscribe((event) => {
    replaying = true;
    try {
      events.emit(event);
    } finally {
      replaying = false;
    }
  });
  return () => {
    stopLocal();
    stopRemote();
  };
}
