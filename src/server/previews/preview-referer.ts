/**
 * Dev servers (Vite and the like) serve pages whose scripts, styles and imports use root-relative
 * paths (`/@vite/client`, `/src/main.ts`), which from a preview at `/preview/<chat>/<name>/<port>/<key>/`
 * would reach Dimsum's own routes. Preview responses carry `Referrer-Policy: same-origin`, so each
 * request such a page (or a module it loaded) makes names the preview it came from; a request
 * outside `/preview/` whose referrer is a live preview is redirected (307) into that preview, where
 * the preview's own checks apply. Nothing is rewritten, so module graphs of any depth resolve: a
 * redirected module's URL is inside the preview, and so is the referrer of its own imports.
 */

/** The preview a referrer names: its chat, process, port and key. */
export interface PreviewOrigin {
  channelId: string;
  name: string;
  port: number;
  key: string;
}

const PREVIEW_PATH = /^\/preview\/([^/]+)\/([^/]+)\/(\d+)\/([^/]+)\//;

/** The preview `referer` points into, when it is a URL of this very server (`host`). */
export function previewOfReferer(
  referer: string | undefined,
  host: string | undefined,
): PreviewOrigin | undefined {
  if (!referer || !host) return undefined;
  let url: URL;
  try {
    url = new URL(referer);
  } catch {
    return undefined;
  }
  if (url.host !== host) return undefined;
  const match = PREVIEW_PATH.exec(url.pathname);
  if (!match) return undefined;
  try {
    return {
      channelId: decodeURIComponent(match[1] as string),
      name: decodeURIComponent(match[2] as string),
      port: Number(match[3]),
      key: match[4] as string,
    };
  } catch {
    return undefined;
  }
}
