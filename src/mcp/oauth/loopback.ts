/**
 * The browser step of `dimsum mcp login`: a listener on 127.0.0.1 that receives the authorization
 * server's redirect (RFC 8252 loopback redirect), checks `state`, and hands back the code.
 */
import { createServer, type Server } from "node:http";
import { DimsumError } from "../../errors.js";
import type { OAuthAuthorizer } from "./provider.js";

export interface LoopbackAuthorizer extends OAuthAuthorizer {
  readonly port: number;
  close(): Promise<void>;
}

export interface LoopbackOptions {
  /** Port to listen on; 0 or a busy port means any free one. */
  port?: number;
  /** Shows the URL to the person (and may open a browser). */
  show: (server: string, url: URL) => void | Promise<void>;
}

const CALLBACK_PATH = "/oauth/callback";

/** Starts the listener; `close()` stops it. */
export async function startLoopbackAuthorizer(options: LoopbackOptions): Promise<LoopbackAuthorizer> {
  const waiting = new Map<
    string,
    { resolve: (redirect: URLSearchParams) => void; reject: (err: Error) => void }
  >();
  const http = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== CALLBACK_PATH) {
      res.writeHead(404).end();
      return;
    }
    const state = url.searchParams.get("state") ?? "";
    const waiter = waiting.get(state);
    if (!waiter) {
      res
        .writeHead(400, { "content-type": "text/plain; charset=utf-8" })
        .end("Unknown or expired sign-in.\n");
      return;
    }
    waiting.delete(state);
    const code = url.searchParams.get("code");
    const error = url.searchParams.get("error");
    if (code) {
      res
        .writeHead(200, { "content-type": "text/html; charset=utf-8" })
        .end("<!doctype html><title>Dimsum</title><p>Signed in. You can close this tab.</p>\n");
      // The whole query: the code, and the issuer (`iss`, RFC 9207) the client checks.
      waiter.resolve(url.searchParams);
    } else {
      res
        .writeHead(400, { "content-type": "text/plain; charset=utf-8" })
        .end(`Sign-in failed: ${error ?? "no code"}\n`);
      const description = url.searchParams.get("error_description");
      waiter.reject(
        new DimsumError(
          "unauthenticated",
          `the authorization server refused the sign-in: ${error ?? "no code"}${description ? ` (${description})` : ""}`,
        ),
      );
    }
  });
  const port = await listen(http, options.port ?? 0).catch(() => listen(http, 0));
  return {
    port,
    redirectUrl: () => `http://127.0.0.1:${port}${CALLBACK_PATH}`,
    authorize(server, url, state, signal) {
      return new Promise<URLSearchParams>((resolve, reject) => {
        const onAbort = () => {
          waiting.delete(state);
          reject(new DimsumError("aborted", `the sign-in to "${server}" was cancelled`));
        };
        if (signal?.aborted) return onAbort();
        signal?.addEventListener("abort", onAbort, { once: true });
        waiting.set(state, {
          resolve: (redirect) => {
            signal?.removeEventListener("abort", onAbort);
            resolve(redirect);
          },
          reject: (err) => {
            signal?.removeEventListener("abort", onAbort);
            reject(err);
          },
        });
        Promise.resolve(options.show(server, url)).catch(() => {});
      });
    },
    async close() {
      for (const waiter of waiting.values())
        waiter.reject(new DimsumError("aborted", "the sign-in was stopped"));
      waiting.clear();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

function listen(http: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    http.once("error", onError);
    http.listen(port, "127.0.0.1", () => {
      http.off("error", onError);
      const address = http.address();
      resolve(typeof address === "object" && address ? address.port : port);
    });
  });
}
