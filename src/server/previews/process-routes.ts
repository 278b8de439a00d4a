/**
 * A chat's processes for the people who may read the chat: `GET /api/channels/:id/processes` (each
 * with its last output lines and preview links), `POST …/processes/:name/stop`; and the previews
 * themselves at `/preview/<channelId>/<name>/<port>/<key>/…`, an HTTP proxy into the process's
 * sandbox through its bridge.
 *
 * The security model of a preview:
 * - only ports of a running process of that chat, reached through that process's own bridge (never
 *   another session's, never the server's loopback);
 * - the page itself (any request that is not a subresource of a preview page) needs the session
 *   cookie of someone who may read the chat: otherwise 404, as for a chat that does not exist;
 * - the page is served with `Content-Security-Policy: sandbox`, so it runs in an opaque origin: its
 *   scripts cannot read Dimsum's cookies or storage nor act on its API as the person viewing it;
 *   such a page's own requests carry no cookie, so they are accepted with the path's key alone (an
 *   HMAC of chat, process, port and start time under a secret of this server process: unguessable,
 *   and void once the process ends);
 * - a dev server's root-relative paths in HTML, JavaScript and CSS are put under the preview's
 *   prefix (preview-rewrite.ts); subresources answer with CORS for the opaque-origin page.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { Readable } from "node:stream";
import { Hono } from "hono";
import { notFound } from "../../errors.js";
import type { Team } from "../../team/types.js";
import { chatProcessKey, type ProcessManager } from "../../tools/process/process-manager.js";
import { sessionCookieOf } from "../auth/cookies.js";
import { type AppEnv, actorOf, type DimsumApp } from "../context.js";
import { isRewritable, MAX_REWRITE_BYTES, rewriteRootPaths } from "./preview-rewrite.js";

const TAIL_LINES = 40;
/** Request headers not passed to the process (Dimsum's own credentials among them). */
const DROP_REQUEST = new Set([
  "cookie",
  "authorization",
  "connection",
  "keep-alive",
  "upgrade",
  "x-csrf-token",
  // Answers come uncompressed, so pages can be rewritten (see preview-rewrite.ts).
  "accept-encoding",
]);
const DROP_RESPONSE = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  // Nothing a process serves may set or clear Dimsum's cookies and storage, or pin its transport.
  "set-cookie",
  "clear-site-data",
  "strict-transport-security",
  "alt-svc",
  "service-worker-allowed",
  "content-security-policy-report-only",
]);

/** Keys of preview paths, under a secret that lives as long as this server process. */
export class PreviewKeys {
  readonly #secret = randomBytes(32);

  key(channelId: string, name: string, port: number, startedAt: number): string {
    return createHmac("sha256", this.#secret)
      .update(`${channelId}\n${name}\n${port}\n${startedAt}`)
      .digest("base64url")
      .slice(0, 32);
  }

  matches(given: string, channelId: string, name: string, port: number, startedAt: number): boolean {
    const want = Buffer.from(this.key(channelId, name, port, startedAt));
    const got = Buffer.from(given);
    return want.length === got.length && timingSafeEqual(want, got);
  }
}

/** The path of a preview (ends with `/`). */
export function previewPath(channelId: string, name: string, port: number, key: string): string {
  return `/preview/${encodeURIComponent(channelId)}/${encodeURIComponent(name)}/${port}/${key}/`;
}

/** Mounts the list and stop routes under `/api` and the preview proxy at `/preview`. */
export function mountProcessRoutes(
  team: Team,
  processes: ProcessManager,
  keys = new PreviewKeys(),
): { api: (app: DimsumApp) => void; previews: (app: DimsumApp) => void } {
  const api = (app: DimsumApp) => {
    const routes = new Hono<AppEnv>();
    routes.get("/:id/processes", async (c) => {
      const channel = await team.getChannel(actorOf(c), c.req.param("id"));
      const key = chatProcessKey(channel.id);
      return c.json(
        processes.list(key).map((info) => {
          const proc = processes.get(key, info.name);
          return {
            ...info,
            output: proc?.tail(TAIL_LINES) ?? [],
            previews: info.ports.map((port) => ({
              port,
              path: previewPath(
                channel.id,
                info.name,
                port,
                keys.key(channel.id, info.name, port, info.startedAt),
              ),
            })),
          };
        }),
      );
    });
    routes.post("/:id/processes/:name/stop", async (c) => {
      const channel = await team.getChannel(actorOf(c), c.req.param("id"));
      const stopped = await processes.stop(
        chatProcessKey(channel.id),
        c.req.param("name"),
        `stopped by ${c.get("auth")?.user.username ?? actorOf(c).userId}`,
      );
      if (!stopped) throw notFound(`This chat has no process named "${c.req.param("name")}".`);
      return c.json(processes.get(chatProcessKey(channel.id), c.req.param("name"))?.info() ?? {});
    });
    app.route("/api/channels", routes);
  };

  const previews = (app: DimsumApp) => {
    app.all("/preview/:channel/:name/:port/:key/*", async (c) => {
      const { channel: channelId, name, key } = c.req.param();
      const port = Number(c.req.param("port"));
      const missing = () => c.text("not found", 404);
      const sessionKey = chatProcessKey(channelId);
      const proc = processes.get(sessionKey, name);
      if (
        !proc?.running ||
        !Number.isInteger(port) ||
        !keys.matches(key, channelId, name, port, proc.startedAt)
      ) {
        return missing();
      }
      const subresource = isSubresource(c.req.header("sec-fetch-dest"));
      if (!subresource) {
        // The page itself: only for a signed-in person who may read the chat.
        const token = sessionCookieOf(c);
        const found = token ? await c.get("services").sessions.authenticate(token) : undefined;
        if (!found) return missing();
        try {
          await team.getChannel({ userId: found.user.id, role: found.user.role }, channelId);
        } catch {
          return missing();
        }
      }
      const socket = await processes.connect(sessionKey, name, port);
      if (!socket) return c.text(`Nothing listens on port ${port} of ${name} now.`, 502);
      const prefix = previewPath(channelId, name, port, key);
      const rest = c.req.path.startsWith(prefix) ? c.req.path.slice(prefix.length - 1) : "/";
      // The process sees the path after the preview's prefix (pages with relative links work).
      const path = `${rest}${new URL(c.req.url).search}`;
      return await proxy(c.req.raw, socket, path, `127.0.0.1:${port}`, subresource, prefix);
    });
  };
  return { api, previews };
}

function isSubresource(dest: string | undefined): boolean {
  return dest !== undefined && dest !== "" && dest !== "document" && dest !== "iframe" && dest !== "frame";
}

function requestHeaders(raw: Request, host: string): Record<string, string> {
  const headers: Record<string, string> = {};
  raw.headers.forEach((value, name) => {
    if (!DROP_REQUEST.has(name.toLowerCase())) headers[name] = value;
  });
  headers.host = host;
  return headers;
}

function responseHeaders(headers: IncomingHttpHeaders, subresource: boolean): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || DROP_RESPONSE.has(name)) continue;
    for (const v of Array.isArray(value) ? value : [value]) out.append(name, v);
  }
  // An opaque origin: the page's scripts cannot act as the person viewing it.
  out.set(
    "content-security-policy",
    "sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads",
  );
  out.set("x-frame-options", "SAMEORIGIN");
  // The opaque-origin page loads its module scripts in CORS mode; they need no credentials.
  if (subresource) {
    out.set("access-control-allow-origin", "*");
    out.set("cross-origin-resource-policy", "cross-origin");
  }
  out.set("cache-control", "no-store");
  return out;
}

function proxy(
  raw: Request,
  socket: import("node:net").Socket,
  path: string,
  host: string,
  subresource: boolean,
  prefix: string,
): Promise<Response> {
  return new Promise((resolve) => {
    const req = httpRequest(
      { createConnection: () => socket, method: raw.method, path, headers: requestHeaders(raw, host) },
      (res) => {
        const status = res.statusCode ?? 502;
        const headers = responseHeaders(res.headers, subresource);
        if (raw.method === "HEAD" || status === 204 || status === 304) {
          resolve(new Response(null, { status, headers }));
          return;
        }
        const type = res.headers["content-type"];
        const size = Number(res.headers["content-length"] ?? 0);
        if (!isRewritable(type) || res.headers["content-encoding"] || size > MAX_REWRITE_BYTES) {
          resolve(new Response(Readable.toWeb(res) as ReadableStream<Uint8Array>, { status, headers }));
          return;
        }
        // A dev server's root-relative paths, put under the preview (see preview-rewrite.ts).
        readAll(res, MAX_REWRITE_BYTES)
          .then((bytes) => {
            headers.delete("content-length");
            headers.delete("etag");
            const text = rewriteRootPaths(bytes.toString("utf8"), type ?? "", prefix);
            resolve(new Response(text, { status, headers }));
          })
          .catch(() =>
            resolve(new Response("The preview's answer was too large to pass on.", { status: 502 })),
          );
      },
    );
    socket.resume();
    req.on("error", () => resolve(new Response("The preview's server did not answer.", { status: 502 })));
    if (raw.body && raw.method !== "GET" && raw.method !== "HEAD") {
      Readable.fromWeb(raw.body as import("node:stream/web").ReadableStream<Uint8Array>).pipe(req);
    } else {
      req.end();
    }
  });
}

function readAll(res: import("node:http").IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) res.destroy(new Error("too large"));
      else chunks.push(chunk);
    });
    res.on("error", reject);
    res.on("end", () => resolve(Buffer.concat(chunks)));
  });
}
