/**
 * Cutting text that is too long for a chunk: at sentence ends first, then at spaces, and for text
 * without spaces (Chinese, Japanese) at characters. Pieces keep their original spelling.
 */
import { charTokens, estimateTokens, partsToTokens, tokenParts } from "./tokens.js";

// A sentence ends at . ! ? followed by space, or at a CJK full stop (which needs no space after it).
const SENTENCE_END = /(?<=[.!?…])\s+|(?<=[。！？；])/u;

/** The sentences of a paragraph, each with its trailing punctuation, whitespace trimmed. */
export function sentences(text: string): string[] {
  return text
    .split(SENTENCE_END)
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/** Splits one over-long piece (no sentence break inside) at spaces, or at characters when it has none. */
function splitLong(text: string, maxTokens: number): string[] {
  const words = text.split(/(\s+)/u);
  if (words.length > 1) {
    return packPieces(
      words.filter((w) => w.trim() !== ""),
      maxTokens,
      " ",
    ).flatMap((piece) => (estimateTokens(piece) > maxTokens ? splitChars(piece, maxTokens) : [piece]));
  }
  return splitChars(text, maxTokens);
}

function splitChars(text: string, maxTokens: number): string[] {
  const out: string[] = [];
  let current = "";
  let tokens = 0;
  for (const char of text) {
    // Counted as we go: estimateTokens of a growing string would make this quadratic.
    const cost = charTokens(char);
    if (current !== "" && tokens + cost > maxTokens) {
      out.push(current);
      current = "";
      tokens = 0;
    }
    current += char;
    tokens += cost;
  }
  if (current !== "") out.push(current);
  return out;
}

/** A piece of text and the separator that goes before it when it is joined to the one before. */
interface Joinable {
  text: string;
  separator: string;
}

/**
 * Greedily joins pieces into runs of at most `maxTokens` (a lone bigger piece stays whole). Counts
 * are kept as parts (CJK characters, other characters) so the running estimate is exactly the
 * estimate of the joined text, without re-estimating it for every piece.
 */
function pack(pieces: readonly Joinable[], maxTokens: number): string[] {
  const out: string[] = [];
  let current = "";
  let parts = { cjk: 0, other: 0 };
  for (const piece of pieces) {
    const own = tokenParts(piece.text);
    const joined =
      current === ""
        ? own
        : { cjk: parts.cjk + own.cjk, other: parts.other + own.other + piece.separator.length };
    if (current !== "" && partsToTokens(joined) > maxTokens) {
      out.push(current);
      current = piece.text;
      parts = own;
      continue;
    }
    current = current === "" ? piece.text : current + piece.separator + piece.text;
    parts = joined;
  }
  if (current !== "") out.push(current);
  return out;
}

/** Greedily joins pieces with `separator` into runs of at most `maxTokens` (a lone bigger piece stays whole). */
export function packPieces(pieces: readonly string[], maxTokens: number, separator: string): string[] {
  return pack(
    pieces.map((text) => ({ text, separator })),
    maxTokens,
  );
}

/** Splits prose into pieces of at most `maxTokens`, preferring sentence boundaries. */
export function splitText(text: string, maxTokens: number): string[] {
  if (estimateTokens(text) <= maxTokens) return [text];
  const parts = sentences(text).flatMap((s) =>
    estimateTokens(s) > maxTokens ? splitLong(s, maxTokens) : [s],
  );
  const cjkJoin = (a: string) => /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}]$/u.test(a);
  // CJK sentences were written without spaces between them; keep it that way when re-joining.
  const separator = parts.length > 0 && parts.every(cjkJoin) ? "" : " ";
  return packPieces(parts, maxTokens, separator);
}

/**
 * Splits code into pieces of at most `maxTokens`, preferring to cut after blank lines, then at line
 * ends. Joining the pieces with newlines gives the code back exactly.
 */
export function splitCode(code: string, maxTokens: number): string[] {
  if (estimateTokens(code) <= maxTokens) return [code];
  const groups: string[][] = [];
  let group: string[] = [];
  for (const line of code.split("\n")) {
    group.push(line);
    // A blank line closes a group and stays with the code above it.
    if (line.trim() === "") {
      groups.push(group);
      group = [];
    }
  }
  if (group.length > 0) groups.push(group);
  const pieces: Joinable[] = [];
  groups.forEach((lines, g) => {
    const separator = g === 0 ? "" : "\n";
    const text = lines.join("\n");
    if (estimateTokens(text) <= maxTokens) {
      pieces.push({ text, separator });
      return;
    }
    lines.forEach((line, l) => {
      const lineSeparator = l === 0 ? separator : "\n";
      if (estimateTokens(line) <= maxTokens) pieces.push({ text: line, separator: lineSeparator });
      else {
        splitChars(line, maxTokens).forEach((part, p) => {
          pieces.push({ text: part, separator: p === 0 ? lineSeparator : "" });
        });
      }
    });
  });
  return pack(pieces, maxTokens);
}

/** The end of a text worth about `tokens` tokens, starting at a word (or character, for CJK) boundary. */
export function tail(text: string, tokens: number): string {
  if (tokens <= 0 || text === "") return "";
  if (estimateTokens(text) <= tokens) return text;
  const words = text.split(/\s+/u).filter((w) => w !== "");
  if (words.length > 1) {
    let out = "";
    for (let i = words.length - 1; i >= 0; i--) {
      const next = out === "" ? words[i]! : `${words[i]} ${out}`;
      if (estimateTokens(next) > tokens) break;
      out = next;
    }
    if (out !== "") return out;
  }
  const chars = Array.from(text);
  let out = "";
  for (let i = chars.length - 1; i >= 0 && estimateTokens(chars[i] + out) <= tokens; i--)
    out = chars[i] + out;
  return out;
}
