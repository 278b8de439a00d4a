/**
 * Dev servers (Vite and the like) serve pages whose scripts, styles and module imports use
 * root-relative paths (`/@vite/client`, `/src/main.ts`), which from a preview at
 * `/preview/<chat>/<name>/<port>/<key>/` would reach Dimsum's own routes. HTML, JavaScript and CSS
 * answers get those paths put under the preview's prefix: attributes (`src`, `href`, `action`),
 * static and dynamic imports (`from "/…"`, `import "/…"`, `import("/…")`) and CSS `url(/…)`.
 * Protocol-relative (`//host`) and already-prefixed paths stay as they are. A URL a script builds
 * at run time from pieces is not seen: such an app needs a build with relative paths.
 */

/** The answers whose bodies are rewritten (by their content type). */
export function isRewritable(contentType: string | undefined): boolean {
  return /^(text\/html|text\/css|(text|application)\/(javascript|ecmascript)|application\/x-javascript)\b/i.test(
    contentType ?? "",
  );
}

/** Larger answers pass through untouched. */
export const MAX_REWRITE_BYTES = 8 * 1024 * 1024;

/** `body` with its root-relative paths under `prefix` (which ends with `/`). */
export function rewriteRootPaths(body: string, contentType: string, prefix: string): string {
  const under = (quote: string) => `${quote}${prefix}`;
  const notOurs = "(?!/|preview/)";
  let out = body.replace(
    new RegExp(`(\\b(?:from|import)\\s*\\(?\\s*)(["'\`])/${notOurs}`, "g"),
    (_m, lead: string, quote: string) => `${lead}${under(quote)}`,
  );
  out = out.replace(
    new RegExp(`(url\\(\\s*)(["']?)/${notOurs}`, "g"),
    (_m, lead: string, quote: string) => `${lead}${under(quote)}`,
  );
  if (/^text\/html/i.test(contentType)) {
    out = out.replace(
      new RegExp(`(\\s(?:src|href|action)\\s*=\\s*)(["'])/${notOurs}`, "gi"),
      (_m, lead: string, quote: string) => `${lead}${under(quote)}`,
    );
  }
  return out;
}
