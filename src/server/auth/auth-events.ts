/**
 * What the auth layer tells the rest of the server when someone's rights change: a role change,
 * sessions that ended (logout, revocation, a password change), an account deleted. The stores emit
 * after the database change; the WebSocket hub listens and closes or re-authorises sockets at once,
 * instead of waiting for its heartbeat. One emitter per server, created by the composition root.
 */
import type { Role } from "./user-store.js";

/** Why sessions ended (for logs and the close reason). */
export type SessionEndReason = "logout" | "revoked" | "password_changed" | "account_disabled";

export type AuthEvent =
  | { type: "role_changed"; userId: string; role: Role; previousRole: Role }
  | { type: "password_changed"; userId: string }
  | { type: "sessions_ended"; userId: string; sessionIds: readonly string[]; reason: SessionEndReason }
  | { type: "user_deleted"; userId: string };

export type AuthEventListener = (event: AuthEvent) => void;

/** A small synchronous emitter: listeners run in order, inside the call that changed the rights. */
export class AuthEvents {
  readonly #listeners = new Set<AuthEventListener>();

  /** `onListenerError` hears what a listener threw; the other listeners still run. */
  constructor(private readonly onListenerError: (err: unknown) => void = () => undefined) {}

  /** Adds a listener; returns the function that removes it. */
  on(listener: AuthEventListener): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  emit(event: AuthEvent): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch (err) {
        this.onListenerError(err);
      }
    }
  }
}
