/**
 * The shape of a catalogue. A message is a string with `{name}` placeholders, or plural forms chosen
 * by `Intl.PluralRules` from the `count` parameter (`other` is required: Chinese needs only it).
 */
export interface PluralMessage {
  readonly zero?: string;
  readonly one?: string;
  readonly two?: string;
  readonly few?: string;
  readonly many?: string;
  readonly other: string;
}

export type Message = string | PluralMessage;

/** The locales the UI speaks; English is the source of the keys and the fallback. */
export const LOCALES = ["en", "zh-CN"] as const;
export type Locale = (typeof LOCALES)[number];

/** Each locale's own name, as the language switch shows it. */
export const LOCALE_NAMES: Record<Locale, string> = { en: "English", "zh-CN": "简体中文" };
