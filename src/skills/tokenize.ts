/**
 * Search tokens for skill matching. CJK text has no spaces between words, so each CJK character is a
 * token and so is each pair of neighbouring characters (bigrams keep 提交 apart from 交提); other text
 * is split into lowercase words, common English words are dropped and endings lightly stemmed.
 */

const CJK = String.raw`\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}`;
// A run of CJK characters, or a run of other letters and digits.
const TOKEN_RUN = new RegExp(String.raw`[${CJK}]+|(?:(?![${CJK}])[\p{L}\p{N}\p{M}])+`, "gu");
const CJK_START = new RegExp(`^[${CJK}]`, "u");

const STOP_WORDS = new Set(
  (
    "a an and are as at be but by can could do does for from had has have how i if in into is it its " +
    "me my of on or our please so than that the their them then there these they this to us was we " +
    "were what when where which who why will with would you your " +
    // Words every skill description uses ("Use when the user asks...") and so tell skills apart poorly.
    "use used uses using user users ask asks asked asking want wants need needs help " +
    // Words of any request ("write me a story about...", "tell me", "give me"): they match whichever
    // skill happens to use them and said nothing about the topic on the labelled prompts.
    "about write writes written writing tell give make get show let like just also any all some one " +
    "over should first new look good best find work works explain more other only very thing things " +
    "before after " +
    // An everyday word with no topic of its own ("change my reservation"): as a skill word it put a
    // code-review skill next to commit-message on every request about a change.
    "change changes changed changing"
  ).split(" "),
);

// Characters so common in Chinese that alone they say nothing; their bigrams are still indexed.
const CJK_STOP_CHARS = new Set([..."的了是我你他她它们这那个一在和也就都吗呢吧啊把被给请帮么写下"]);

/** Lowercase search tokens of `text`: words (stemmed, stop words dropped), CJK unigrams and bigrams. */
export function tokenize(text: string): string[] {
  const tokens: string[] = [];
  for (const match of text.normalize("NFKC").toLowerCase().matchAll(TOKEN_RUN)) {
    const run = match[0];
    if (CJK_START.test(run)) addCjk(run, tokens);
    else addWord(run, tokens);
  }
  return tokens;
}

/**
 * Tokens of a user message to match skills with: as `tokenize`, except that a CJK run longer than one
 * character gives only its bigrams. Single characters (写, 信) match skills about anything; a skill is
 * worth its context only when a word of the message is in it.
 */
export function queryTokens(text: string): string[] {
  const tokens: string[] = [];
  for (const match of text.normalize("NFKC").toLowerCase().matchAll(TOKEN_RUN)) {
    const run = match[0];
    if (!CJK_START.test(run)) addWord(run, tokens);
    else if ([...run].length === 1) addCjk(run, tokens);
    else for (const token of bigrams(run)) tokens.push(token);
  }
  return tokens;
}

function bigrams(run: string): string[] {
  const chars = [...run];
  const out: string[] = [];
  for (let i = 0; i + 1 < chars.length; i++) {
    if (!(CJK_STOP_CHARS.has(chars[i]!) && CJK_STOP_CHARS.has(chars[i + 1]!)))
      out.push(chars[i]! + chars[i + 1]!);
  }
  return out;
}

function addCjk(run: string, tokens: string[]): void {
  const chars = [...run];
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i]!;
    if (!CJK_STOP_CHARS.has(char)) tokens.push(char);
    const next = chars[i + 1];
    if (next !== undefined) tokens.push(char + next);
  }
}

function addWord(word: string, tokens: string[]): void {
  if (STOP_WORDS.has(word)) return;
  // Single letters carry no meaning; single digits may ("top 3").
  if (word.length === 1 && !/\d/.test(word)) return;
  tokens.push(/^[a-z]+$/.test(word) ? stem(word) : word);
}

/** A few suffix rules so review/reviews/reviewing and commit/commits/committed meet. */
export function stem(word: string): string {
  let w = word;
  if (w.length > 4 && w.endsWith("ies")) w = `${w.slice(0, -3)}y`;
  else if (w.length > 3 && w.endsWith("s") && !/(?:ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith("ing")) w = undouble(w.slice(0, -3));
  else if (w.length > 4 && w.endsWith("ed")) w = undouble(w.slice(0, -2));
  if (w.length > 3 && w.endsWith("e")) w = w.slice(0, -1);
  return w;
}

function undouble(w: string): string {
  const last = w.at(-1);
  return w.length > 2 && last === w.at(-2) && !"lsz".includes(last ?? "") ? w.slice(0, -1) : w;
}
