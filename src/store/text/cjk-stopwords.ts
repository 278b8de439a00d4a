/**
 * CJK characters that say nothing on their own in a search: pronouns, particles, question words and
 * other function characters of Chinese and Japanese. A query drops them as single characters, and a
 * bigram made of two of them (我的, 什么, 怎么) too; they still count inside other bigrams (喜欢的 → 欢的
 * is dropped only if both are listed). Hiragana is mostly grammar, so a lone hiragana character is
 * never a query term either (see terms.ts).
 */
const CHINESE =
  "的了是我你他她它们这那个一在和也就都吗呢吧啊呀把被给请帮么什怎哪谁有要会能得地着过吗嘛么该应多少几不没很还又";
const JAPANESE = "私僕何誰";

export const CJK_STOP_CHARS: ReadonlySet<string> = new Set([...CHINESE, ...JAPANESE]);
