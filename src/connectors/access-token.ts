/**
 * A platform's access token (DingTalk, Feishu, WeCom): cached until shortly before it expires, one
 * request shared by concurrent callers, dropped when the platform says it is no longer valid.
 */

/** Renew this long before the token's expiry. */
const TOKEN_MARGIN_MS = 5 * 60 * 1000;
/** What a token lives when the platform does not say. */
const DEFAULT_LIFETIME_SEC = 7200;

/** A token as the platform handed it out. */
export interface IssuedToken {
  value: string;
  /** Seconds it lives (default 2 h). */
  expiresInSec?: number | undefined;
}

export class AccessToken {
  readonly #issue: (signal?: AbortSignal) => Promise<IssuedToken>;
  readonly #now: () => number;
  #token: { value: string; until: number } | undefined;
  #pending: Promise<string> | undefined;

  /** `issue` asks the platform for a new token; it throws when the platform refuses. */
  constructor(issue: (signal?: AbortSignal) => Promise<IssuedToken>, now: () => number) {
    this.#issue = issue;
    this.#now = now;
  }

  /** The cached token, fetched when missing or about to expire. */
  get(signal?: AbortSignal): Promise<string> {
    if (this.#token && this.#token.until > this.#now()) return Promise.resolve(this.#token.value);
    // Concurrent sends share one token request.
    this.#pending ??= this.#fetch(signal).finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  /** Forgets the cached token (the platform said it is no longer valid). */
  drop(): void {
    this.#token = undefined;
  }

  async #fetch(signal?: AbortSignal): Promise<string> {
    const issued = await this.#issue(signal);
    const lifetimeMs = (issued.expiresInSec ?? DEFAULT_LIFETIME_SEC) * 1000;
    this.#token = {
      value: issued.value,
      until: this.#now() + Math.max(lifetimeMs - TOKEN_MARGIN_MS, lifetimeMs / 2),
    };
    return issued.value;
  }
}
