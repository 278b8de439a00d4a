/**
 * A build step for the web UI's catalogues: every message key ("settings.tab.providers") becomes a
 * small number, in both catalogues and at every place the code names it, so the English first load
 * carries the words and not a second copy of every key's long name. Development (`vite` serve) and
 * the tests keep the names. Keys are written as whole string literals (the catalogue test already
 * asks for this); a key built in a template literal would not be found, so `t(`…`)` fails the build.
 */
import { readFileSync } from "node:fs";
import type { Plugin } from "vite";

/** One top-level entry of the English catalogue's source: its key and its value as written. */
export interface CatalogueEntry {
  key: string;
  value: string;
}

/** The entries of en.ts (`  "key": value,` at the top level, a value may run over several lines). */
export function catalogueEntries(enSource: string): CatalogueEntry[] {
  const entries: CatalogueEntry[] = [];
  let open: { key: string; lines: string[] } | undefined;
  const close = () => {
    if (!open) return;
    const value = open.lines.join("\n").trim().replace(/,$/, "");
    entries.push({ key: open.key, value });
    open = undefined;
  };
  for (const line of enSource.split("\n")) {
    const start = /^ {2}"([^"\n]+)":(.*)$/.exec(line);
    if (start) {
      close();
      open = { key: start[1] ?? "", lines: [start[2] ?? ""] };
    } else if (/^ {2}\/\/|^\S/.test(line)) close();
    else if (open) open.lines.push(line);
  }
  close();
  return entries;
}

/**
 * Each key's number. The numbers follow the English texts' alphabetical order: similar texts sit
 * together in the array, which gzip compresses a little better than the file's order. Keys whose
 * English and Chinese are both the same ("Remove" → "移除" in five places) share one number.
 */
export function catalogueIds(
  entries: readonly CatalogueEntry[],
  translations: readonly CatalogueEntry[] = [],
): Map<string, number> {
  const translated = new Map(translations.map((entry) => [entry.key, entry.value]));
  const sameText = (entry: CatalogueEntry) => `${entry.value}\u0000${translated.get(entry.key) ?? entry.key}`;
  const sorted = [...entries].sort((a, b) => (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
  const idOfText = new Map<string, number>();
  const ids = new Map<string, number>();
  for (const entry of sorted) {
    const text = sameText(entry);
    let id = idOfText.get(text);
    if (id === undefined) {
      id = idOfText.size;
      idOfText.set(text, id);
    }
    ids.set(entry.key, id);
  }
  return ids;
}

/** The English catalogue as an array indexed by key number: the smallest form of what the first load carries. */
export function catalogueArray(entries: readonly CatalogueEntry[], ids: ReadonlyMap<string, number>): string {
  const values: string[] = [];
  for (const entry of entries) values[ids.get(entry.key) ?? -1] = entry.value;
  if (values.some((value) => value === undefined)) throw new Error("en.ts: the key numbers leave a gap");
  return `export const en = [\n${values.join(",\n")}\n];\n`;
}

/** Numbers valid for both numberings: keys share one only where both shared it. */
function intersect(a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>): Map<string, number> {
  const byPair = new Map<string, number>();
  const ids = new Map<string, number>();
  for (const [key, id] of a) {
    const pair = `${id}/${b.get(key)}`;
    let shared = byPair.get(pair);
    if (shared === undefined) {
      shared = byPair.size;
      byPair.set(pair, shared);
    }
    ids.set(key, shared);
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
 * The Vite plugin: `enCatalogue` and `translations` are the paths of web/src/i18n/en.ts and the other
 * catalogues, `sourceDir` the folder it rewrites.
 */
export function i18nShortIds(
  enCatalogue: string,
  translations: readonly string[],
  sourceDir: string,
): Plugin {
  let entries: CatalogueEntry[] = [];
  let ids: ReadonlyMap<string, number> = new Map();
  return {
    name: "dimsum-i18n-short-ids",
    apply: "build",
    enforce: "pre",
    buildStart() {
      entries = catalogueEntries(readFileSync(enCatalogue, "utf8"));
      // A number is shared only where every catalogue has the same text for the keys.
      const others = translations.map((path) => catalogueEntries(readFileSync(path, "utf8")));
      ids = others
        .slice(1)
        .reduce(
          (shared, other) => intersect(shared, catalogueIds(entries, other)),
          catalogueIds(entries, others[0] ?? []),
        );
      if (ids.size === 0) this.error(`no message keys found in ${enCatalogue}`);
    },
    transform(code, id) {
      if (!id.startsWith(sourceDir) || !/\.tsx?$/.test(id)) return null;
      if (id === enCatalogue) return { code: catalogueArray(entries, ids), map: null };
      return { code: shortenKeys(code, ids, id), map: null };
    },
  };
}
