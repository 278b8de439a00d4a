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
 * together in the array, which gzip compresses a little better than the file's order (73 bytes).
 */
export function catalogueIds(entries: readonly CatalogueEntry[]): Map<string, number> {
  const sorted = [...entries].sort((a, b) => (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
  return new Map(sorted.map((entry, id) => [entry.key, id]));
}

/** The English catalogue as an array indexed by key number: the smallest form of what the first load carries. */
export function catalogueArray(entries: readonly CatalogueEntry[], ids: ReadonlyMap<string, number>): string {
  const values: string[] = [];
  for (const entry of entries) values[ids.get(entry.key) ?? -1] = entry.value;
  return `export const en = [\n${values.join(",\n")}\n];\n`;
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

/** The Vite plugin: `enCatalogue` is the path of web/src/i18n/en.ts, `sourceDir` the folder it rewrites. */
export function i18nShortIds(enCatalogue: string, sourceDir: string): Plugin {
  let entries: CatalogueEntry[] = [];
  let ids: ReadonlyMap<string, number> = new Map();
  return {
    name: "dimsum-i18n-short-ids",
    apply: "build",
    enforce: "pre",
    buildStart() {
      entries = catalogueEntries(readFileSync(enCatalogue, "utf8"));
      ids = catalogueIds(entries);
      if (ids.size === 0) this.error(`no message keys found in ${enCatalogue}`);
    },
    transform(code, id) {
      if (!id.startsWith(sourceDir) || !/\.tsx?$/.test(id)) return null;
      if (id === enCatalogue) return { code: catalogueArray(entries, ids), map: null };
      return { code: shortenKeys(code, ids, id), map: null };
    },
  };
}
