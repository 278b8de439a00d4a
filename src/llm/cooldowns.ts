/**
 * Cooldowns of providers that failed: a model chain skips a provider while it cools down. One store
 * serves every run of a process (the in-memory one here) or every instance (the server's Redis one).
 */
import type { ErrorCode } from "../errors.js";

export interface Cooldown {
  /** Epoch milliseconds when the provider may be tried again. */
  until: number;
  /** Why, as said in the `model_fallback` event, e.g. "rate limited (429)". */
  reason: string;
  /** The error code of the failure that started it. */
  code: ErrorCode;
}

/** Where cooldowns live. Failures of the store must not fail a call: implementations may throw, callers ignore. */
export interface CooldownStore {
  get(provider: string): Promise<Cooldown | undefined>;
  set(provider: string, cooldown: Cooldown): Promise<void>;
  clear(provider: string): Promise<void>;
}

/** Cooldowns in this process's memory; expired entries read as absent. */
export function createMemoryCooldownStore(now: () => number = Date.now): CooldownStore {
  const entries = new Map<string, Cooldown>();
  return {
    async get(provider) {
      const entry = entries.get(provider);
      if (entry === undefined) return undefined;
      if (entry.until <= now()) {
        entries.delete(provider);
        return undefined;
      }
      return entry;
    },
    async set(provider, cooldown) {
      const current = entries.get(provider);
      // A longer cooldown (an auth failure) is not shortened by a later rate limit.
      if (current === undefined || current.until < cooldown.until) entries.set(provider, cooldown);
    },
    async clear(provider) {
      entries.delete(provider);
    },
  };
}
