/** Keeps secrets (env values used by an HTTP tool) out of everything the model, logs and traces see. */

export const REDACTED = "[redacted]";
/** Shorter values are not redacted: blanking every "1" or "id" would wreck the text and hide nothing. */
export const MIN_SECRET_LENGTH = 4;

/** Replaces every secret, also in its URL-encoded, form-encoded and JSON-escaped forms. */
export type Redactor = (text: string) => string;

/** A redactor for `secrets`; the identity function when there are none worth hiding. */
export function createRedactor(secrets: Iterable<string | undefined>): Redactor {
  const variants = new Set<string>();
  for (const secret of secrets) {
    if (secret === undefined || secret.length < MIN_SECRET_LENGTH) continue;
    variants.add(secret);
    variants.add(encodeURIComponent(secret));
    variants.add(new URLSearchParams({ s: secret }).toString().slice(2));
    variants.add(JSON.stringify(secret).slice(1, -1));
  }
  // Longest first, so a secret that contains another is replaced whole.
  const ordered = [...variants].sort((a, b) => b.length - a.length);
  if (ordered.length === 0) return (text) => text;
  return (text) => {
    let out = text;
    for (const variant of ordered) if (out.includes(variant)) out = out.split(variant).join(REDACTED);
    return out;
  };
}
