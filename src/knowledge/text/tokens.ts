/**
 * Token estimates for chunk sizes: one token per CJK character, four characters a token otherwise.
 * Chunk sizes are targets, not hard limits, so an estimate that needs no tokenizer is enough.
 */

const CJK = /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}]/gu;
const CJK_ONE = /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}]/u;
const CHARS_PER_TOKEN = 4;

/** The two counts an estimate is made of; they add up exactly when texts are joined. */
export interface TokenParts {
  cjk: number;
  other: number;
}

/** CJK characters and other UTF-16 units of a text. */
export function tokenParts(text: string): TokenParts {
  const cjk = text.match(CJK)?.length ?? 0;
  return { cjk, other: Math.max(0, text.length - cjk) };
}

/** The estimate for counted parts. */
export function partsToTokens(parts: TokenParts): number {
  return parts.cjk + Math.ceil(parts.other / CHARS_PER_TOKEN);
}

/** Estimated tokens of a text. */
export function estimateTokens(text: string): number {
  return text === "" ? 0 : partsToTokens(tokenParts(text));
}

/** The share of a token one character adds (1 for CJK, 1/4 otherwise), for counting as text grows. */
export function charTokens(char: string): number {
  return CJK_ONE.test(char) ? 1 : 1 / CHARS_PER_TOKEN;
}
