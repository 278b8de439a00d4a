/**
 * The UI's words: `t(key, params)` in the current locale. English is bundled (it is the source of the
 * keys and the fallback); the Chinese catalogue is loaded on demand, so English pages carry none of it.
 * Components re-render on a switch because the app's root reads `useLocale()`.
 */
import { useEffect, useState } from "preact/hooks";
import { en } from "./en.js";
import { formatMessage, type MessageParams } from "./format-message.js";
import { LOCALES, type Locale, type Message, type PluralMessage } from "./messages.js";

export { LOCALE_NAMES, LOCALES, type Locale } from "./messages.js";

/** Every key of the UI, as English defines them. */
export type MessageKey = keyof typeof en;

/** Another locale's catalogue: every English key, plural where English is plural. */
export type Translation = {
  readonly [K in MessageKey]: (typeof en)[K] extends string ? string : PluralMessage;
};

const STORAGE_KEY = "dimsum.locale";

let current: Locale = "en";
let messages: Readonly<Record<MessageKey, Message>> = en;
const listeners = new Set<(locale: Locale) => void>();

/** A locale's catalogue and its descriptions of the built-in tools (English has the server's own). */
interface Loaded {
  messages: Translation;
  tools: Readonly<Record<string, string>>;
}

let toolTexts: Readonly<Record<string, string>> = {};

const loaders: Record<Exclude<Locale, "en">, () => Promise<Loaded>> = {
  "zh-CN": () => import("./zh-CN.js").then((m) => ({ messages: m.zhCN, tools: m.zhToolDescriptions })),
};

/** What the built-in tool `name` does, in the current locale; undefined where the server's words serve. */
export function toolDescription(name: string): string | undefined {
  return toolTexts[name];
}

/** The UI text for `key` in the current locale. */
export function t(key: MessageKey, params?: MessageParams): string {
  return formatMessage(current, messages[key] ?? en[key], params);
}

/** The current locale. */
export function currentLocale(): Locale {
  return current;
}

/** Whether `value` is a locale the UI speaks. */
export function isLocale(value: unknown): value is Locale {
  return typeof value === "string" && (LOCALES as readonly string[]).includes(value);
}

/** The first of the browser's languages the UI speaks (any Chinese is Simplified Chinese); English otherwise. */
export function detectLocale(languages: readonly string[]): Locale {
  for (const tag of languages) {
    const lower = tag.toLowerCase();
    if (lower.startsWith("zh")) return "zh-CN";
    if (lower.startsWith("en")) return "en";
  }
  return "en";
}

/** The locale this browser used last, else the one its languages ask for. */
export function initialLocale(): Locale {
  try {
    const saved = localStorage.getItem(STORAGE_KEY);
    if (isLocale(saved)) return saved;
  } catch {
    // Storage blocked: the browser's languages decide.
  }
  return detectLocale(typeof navigator === "undefined" ? [] : navigator.languages);
}

/**
 * Switches the UI to `locale` (loading its catalogue) and sets `<html lang>`; `remember` keeps it for
 * this browser's next visit (a choice, or the account's), unlike a guess from the browser's languages.
 */
export async function setLocale(locale: Locale, remember = true): Promise<void> {
  const next = locale === "en" ? { messages: en, tools: {} } : await loaders[locale]();
  current = locale;
  messages = next.messages;
  toolTexts = next.tools;
  if (typeof document !== "undefined") document.documentElement.lang = locale;
  try {
    if (remember) localStorage.setItem(STORAGE_KEY, locale);
  } catch {
    // Not remembered on this browser; the account still carries it.
  }
  for (const listener of listeners) listener(locale);
}

/** The current locale, re-rendering the caller when it changes. */
export function useLocale(): Locale {
  const [locale, setState] = useState(current);
  useEffect(() => {
    listeners.add(setState);
    setState(current);
    return () => {
      listeners.delete(setState);
    };
  }, []);
  return locale;
}
