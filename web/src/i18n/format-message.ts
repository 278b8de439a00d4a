/** Fills a message's `{name}` placeholders and picks its plural form for the locale. */
import type { Message } from "./messages.js";

export type MessageParams = Readonly<Record<string, string | number>>;

const rulesByLocale = new Map<string, Intl.PluralRules>();

function pluralRules(locale: string): Intl.PluralRules {
  let rules = rulesByLocale.get(locale);
  if (!rules) {
    rules = new Intl.PluralRules(locale);
    rulesByLocale.set(locale, rules);
  }
  return rules;
}

/** The text of `message` in `locale`, placeholders filled (numbers formatted for the locale). */
export function formatMessage(locale: string, message: Message, params: MessageParams = {}): string {
  let text: string;
  if (typeof message === "string") text = message;
  else {
    const count = Number(params.count ?? 0);
    const form = pluralRules(locale).select(count) as keyof typeof message;
    text = message[form] ?? message.other;
  }
  if (!text.includes("{")) return text;
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const value = params[name];
    if (value === undefined) return whole;
    return typeof value === "number" ? value.toLocaleString(locale) : value;
  });
}
