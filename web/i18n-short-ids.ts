/**
 * A build step for the web UI's catalogues: every message key ("settings.tab.providers") becomes a
 * small number, in both catalogues and at every place the code names it, so the English first load
 * carries the words and not a second copy of every key's long name. Development (`vite` serve) and
 * the tests keep the names. Keys are written as whole string literals (the catalogue test already
 * asks for this); a key built in a template literal would not be found, so `t(`…`)` fails the build.
 */
import { readFileSync } from "node:fs";
import type { Plugin } from "vite";

/** Each key of the English catalogue's source and its number, in catalogue order. */
export function catalogueIds(enSource: string): Map<string, number> {
  const ids = new Map<string, number>();
  for (const match of enSource.matchAll(/^ {2}"([^"\n]+)":/gm)) {
    const key = match[1];
    if (key !== undefined && !ids.has(key)) ids.set(key, ids.size);
  }
  return ids;
}

const KEY_LITERAL = /(["'])([A-Za-z][\w-]*(?:\.[\w-]+)+)\1/g;

/** `code` with every string literal that is exactly a key replaced by the key's number. */
export function shortenKeys(code: string, ids: ReadonlyMap<string, number>, file: string): string {
  if (/\bt\(\s*`/.test(code)) {
    throw new Error(
      `${file}: t() is given a template literal; write each key as a whole string literal so the build can find it`,
    );
  }
  return code.replace(KEY_LITERAL, (whole, _quote: string, key: string) => {
    const id = ids.get(key);
    return id === undefined ? whole : String(id);
  });
}

/**
 * The English catalogue, its keys already numbered in order, as an array: `{0: "…", 1: "…"}` becomes
 * `["…", "…"]`, the smallest form of what the first load must carry anyway.
 */
export function catalogueAsArray(code: string, size: number): string {
  let next = 0;
  const body = code.replace(/^ {2}(\d+):\s*/gm, (_whole, id: string) => {
    if (Number(id) !== next) throw new Error(`en.ts: key number ${id} where ${next} was expected`);
    next += 1;
    return "  ";
  });
  if (next !== size) throw new Error(`en.ts: ${next} of ${size} keys found at the top level`);
  const open = body.indexOf("export const en = {");
  const close = body.lastIndexOf("\n};");
  if (open < 0 || close < open) throw new Error("en.ts: expected `export const en = { … };`");
  return `${body.slice(0, open)}export const en = [${body.slice(open + 19, close)}\n];${body.slice(close + 4)}`;
}

/** The Vite plugin: `enCatalogue` is the path of web/src/i18n/en.ts, `sourceDir` the folder it rewrites. */
export function i18nShortIds(enCatalogue: string, sourceDir: string): Plugin {
  let ids: ReadonlyMap<string, number> = new Map();
  return {
    name: "dimsum-i18n-short-ids",
    apply: "build",
    enforce: "pre",
    buildStart() {
      ids = catalogueIds(readFileSync(enCatalogue, "utf8"));
      if (ids.size === 0) this.error(`no message keys found in ${enCatalogue}`);
    },
    transform(code, id) {
      if (!id.startsWith(sourceDir) || !/\.tsx?$/.test(id)) return null;
      const short = shortenKeys(code, ids, id);
      return { code: id === enCatalogue ? catalogueAsArray(short, ids.size) : short, map: null };
    },
  };
}
