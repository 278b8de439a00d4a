/**
 * The built-in gallery: the ready teams in the package's `templates/` folder, one JSON file each,
 * read and checked once. A file that does not parse is a bug of the package, reported with its name.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DimsumError } from "../../errors.js";
import { parseTemplate } from "./parse-template.js";
import type { Template } from "./template-schema.js";

/** One ready team: its file's base name as id, and the template itself. */
export interface GalleryEntry {
  id: string;
  template: Template;
}

/** `templates/` at the package root (three levels up from dist/team/templates, src/… and the CLI bundle). */
export function defaultGalleryDir(): string {
  return fileURLToPath(new URL("../../../templates/", import.meta.url));
}

/** Loads the gallery from a folder once and keeps it. */
export function createGallery(dir: string = defaultGalleryDir()): () => Promise<GalleryEntry[]> {
  let loaded: Promise<GalleryEntry[]> | undefined;
  return () => {
    loaded ??= load(dir).catch((err: unknown) => {
      loaded = undefined;
      throw err;
    });
    return loaded;
  };
}

/** The languages the gallery has its own folder for (`templates/zh-CN/`); English is the top folder. */
const GALLERY_LOCALES = ["zh-CN"] as const;

/**
 * The gallery in a person's language: each team from the locale's folder where it has one (same
 * file name), the English one otherwise; English for any other locale. Each folder is read once.
 */
export function createLocalizedGallery(
  dir: string = defaultGalleryDir(),
): (locale?: string) => Promise<GalleryEntry[]> {
  const english = createGallery(dir);
  const translated = new Map(GALLERY_LOCALES.map((locale) => [locale, createGallery(join(dir, locale))]));
  return async (locale) => {
    const base = await english();
    const load = translated.get(locale as (typeof GALLERY_LOCALES)[number]);
    if (!load) return base;
    const own = new Map((await load()).map((entry) => [entry.id, entry]));
    return base.map((entry) => own.get(entry.id) ?? entry);
  };
}

/** The gallery's order, the teams most people start with first; other files follow by name. */
const FIRST = [
  "writing-room",
  "research-desk",
  "code-review",
  "customer-support",
  "daily-report",
  "meeting-notes",
  "product-spec",
  "data-analysis",
];

function rank(file: string): number {
  const at = FIRST.indexOf(file.replace(/\.json$/, ""));
  return at === -1 ? FIRST.length : at;
}

async function load(dir: string): Promise<GalleryEntry[]> {
  const files = (await readdir(dir))
    .filter((f) => f.endsWith(".json"))
    .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  const entries: GalleryEntry[] = [];
  for (const file of files) {
    const text = await readFile(join(dir, file), "utf8");
    try {
      entries.push({ id: file.replace(/\.json$/, ""), template: parseTemplate(JSON.parse(text)) });
    } catch (err) {
      throw new DimsumError("internal", `The built-in template ${file} is not valid: ${String(err)}`, {
        cause: err,
      });
    }
  }
  return entries;
}
