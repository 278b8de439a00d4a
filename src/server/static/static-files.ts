/**
 * Serves the built single-page app (`web/dist`): files by path, `index.html` for other page routes so
 * client-side routing works. Every path is decoded, resolved and checked to stay inside the root
 * (symlinks included) before touching the disk.
 */
import { readFile, realpath, stat } from "node:fs/promises";
import { extname, resolve, sep } from "node:path";
import type { Handler } from "hono";
import type { AppEnv } from "../context.js";

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".ico": "image/x-icon",
  ".woff": "font/woff",
  ".woff2": "font/woff2",
  ".ttf": "font/ttf",
  ".wasm": "application/wasm",
  ".webmanifest": "application/manifest+json",
};

/** Paths that belong to the API or the socket, never to the SPA. */
export function isApiPath(path: string): boolean {
  return (
    path === "/api" || path.startsWith("/api/") || path === "/v1" || path.startsWith("/v1/") || path === "/ws"
  );
}

function notBuiltPage(root: string): string {
  const where = root.replace(/[&<>"]/g, (ch) => `&#${ch.charCodeAt(0)};`);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Dimsum: web UI not built</title></head>
<body><h1>The Dimsum web UI is not built yet</h1>
<p>The server is running and its API works, but there is no <code>${where}/index.html</code>.</p>
<p>Build the UI with <code>npm run build:web</code> in the Dimsum folder, then reload this page.</p></body></html>`;
}

/** Decodes a URL path into a file path inside `root`, or undefined if it would leave it. */
export function resolveInside(root: string, urlPath: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return undefined;
  }
  if (decoded.includes("\0")) return undefined;
  // Hidden files (.env, .git) are never part of a build's output worth serving.
  if (decoded.split(/[/\\]/).some((segment) => segment.startsWith("."))) return undefined;
  const target = resolve(root, `.${sep}${decoded}`);
  return target === root || target.startsWith(root + sep) ? target : undefined;
}

async function fileInside(root: string, path: string): Promise<string | undefined> {
  try {
    const [realRoot, realTarget] = await Promise.all([realpath(root), realpath(path)]);
    if (realTarget !== realRoot && !realTarget.startsWith(realRoot + sep)) return undefined;
    return (await stat(realTarget)).isFile() ? realTarget : undefined;
  } catch {
    return undefined;
  }
}

/** The GET handler for the SPA rooted at `root`; API paths fall through to the next handler. */
export function staticSite(root: string): Handler<AppEnv> {
  const absRoot = resolve(root);
  const indexFile = resolve(absRoot, "index.html");
  return async (c, next) => {
    const path = new URL(c.req.url).pathname;
    if (isApiPath(path)) return next();
    const target = resolveInside(absRoot, path);
    if (target === undefined) return c.text("not found", 404);
    const file = target === absRoot ? undefined : await fileInside(absRoot, target);
    if (file) {
      const body = await readFile(file);
      const immutable = path.startsWith("/assets/");
      return c.body(body, 200, {
        "Content-Type": CONTENT_TYPES[extname(file).toLowerCase()] ?? "application/octet-stream",
        "Cache-Control": immutable ? "public, max-age=31536000, immutable" : "no-cache",
      });
    }
    // Missing assets are real 404s; other paths are client-side routes of the SPA.
    if (path.startsWith("/assets/") || extname(path) !== "") return c.text("not found", 404);
    const index = await fileInside(absRoot, indexFile);
    if (!index) return c.html(notBuiltPage(absRoot), 503, { "Cache-Control": "no-store" });
    return c.body(await readFile(index), 200, {
      "Content-Type": CONTENT_TYPES[".html"] ?? "text/html",
      "Cache-Control": "no-cache",
    });
  };
}
