/**
 * The browser step of a member's MCP sign-in on the team server: the Dimsum server is the redirect
 * target (`/api/mcp/oauth/callback`). Starting a sign-in resolves to the authorization URL the
 * browser opens; the callback hands the code (checked by `state`) to the waiting sign-in. Behind a
 * load balancer the callback may reach another instance than the one waiting: a `forward` hands it
 * to the instance that holds the `state` (see instance-sync.ts).
 */
import { DimsumError } from "../errors.js";
import type { McpControl, McpServerView } from "../mcp/server-pool.js";

export const MCP_CALLBACK_PATH = "/api/mcp/oauth/callback";

export type SignInStart = { authorizationUrl: string } | { server: McpServerView };

/** Hands a callback this instance does not hold to the one that does; rejects when none does. */
export type ForwardCallback = (
  state: string,
  code: string | undefined,
  error: string | undefined,
  iss: string | undefined,
) => Promise<McpServerView>;

export class McpSignIns {
  /** Set where several instances serve one team. */
  forward: ForwardCallback | undefined;
  readonly #waiting = new Map<
    string,
    { resolve: (redirect: URLSearchParams) => void; reject: (err: Error) => void }
  >();
  readonly #finished = new Map<string, Promise<McpServerView>>();

  /** Starts `person`'s sign-in; resolves once the authorization server's URL is known (or it needed none). */
  async start(pool: McpControl, person: string, name: string, origin: string): Promise<SignInStart> {
    let showUrl: (url: string, state: string) => void = () => {};
    const urlKnown = new Promise<{ url: string; state: string }>((resolve) => {
      showUrl = (url, state) => resolve({ url, state });
    });
    const done = pool.signIn(person, name, {
      redirectUrl: () => `${origin}${MCP_CALLBACK_PATH}`,
      authorize: (_server, url, state, signal) =>
        new Promise<URLSearchParams>((resolve, reject) => {
          this.#waiting.set(state, { resolve, reject });
          signal?.addEventListener("abort", () => {
            this.#waiting.delete(state);
            reject(new DimsumError("aborted", "the sign-in was not finished in time"));
          });
          showUrl(url.href, state);
        }),
    });
    done.catch(() => {});
    const first = await Promise.race([
      urlKnown.then((u) => ({ kind: "url" as const, ...u })),
      done.then((server) => ({ kind: "done" as const, server })),
    ]);
    if (first.kind === "done") return { server: first.server };
    this.#finished.set(first.state, done);
    // A sign-in abandoned in the browser ends at the time limit; forget it then.
    done
      .catch(() => {})
      .finally(() => {
        this.#finished.delete(first.state);
        this.#waiting.delete(first.state);
      });
    return { authorizationUrl: first.url };
  }

  /** Whether a sign-in waiting for the callback with this `state` runs in this instance. */
  holds(state: string): boolean {
    return this.#waiting.has(state);
  }

  /**
   * The callback: hands over the code, with the authorization server's `iss` (which the SDK checks
   * against the server it asked, RFC 9207), and waits for the sign-in to finish.
   */
  async complete(
    state: string,
    code: string | undefined,
    error: string | undefined,
    iss?: string,
  ): Promise<McpServerView> {
    if (!this.holds(state) && this.forward) return this.forward(state, code, error, iss);
    const waiter = this.#waiting.get(state);
    const done = this.#finished.get(state);
    this.#waiting.delete(state);
    this.#finished.delete(state);
    if (!waiter || !done) throw new DimsumError("invalid", "unknown or expired sign-in", { status: 400 });
    if (code) waiter.resolve(new URLSearchParams({ code, state, ...(iss !== undefined ? { iss } : {}) }));
    else
      waiter.reject(
        new DimsumError("unauthenticated", `the authorization server refused: ${error ?? "no code"}`),
      );
    return done;
  }
}
