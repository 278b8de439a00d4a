// Deterministic synthetic text for the retrieval benches: a seeded PRNG and a Zipf-distributed
// vocabulary of made-up words, so large corpora are reproducible run to run.

/** Syllables the made-up words are built of. */
export const SYLLABLES = [
  "ka",
  "to",
  "ri",
  "mo",
  "sen",
  "la",
  "vi",
  "por",
  "da",
  "ne",
  "qu",
  "zel",
  "fa",
  "mi",
  "ro",
  "tan",
  "bel",
  "cor",
];

/** A seeded PRNG (mulberry32) returning numbers in [0, 1). */
export function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A function drawing words from `size` made-up words built of `syllables`, with Zipf-like frequencies. */
export function zipfWords(random, syllables, size) {
  const vocab = Array.from({ length: size }, (_, i) => {
    let word = "";
    for (let j = 0; j < 2 + (i % 3); j++) word += syllables[Math.floor(random() * syllables.length)];
    return word + i.toString(36);
  });
  return () => vocab[Math.min(vocab.length - 1, Math.floor(vocab.length ** random()) - 1)];
}
