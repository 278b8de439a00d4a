/**
 * Takes secrets out of what the audit log writes: values under secret-sounding keys (keys, tokens,
 * passwords, headers, environment) become "[redacted]", and strings shaped like a credential are
 * replaced wherever they sit. What remains says *that* a secret was set or changed, never its value.
 */

export const REDACTED = "[redacted]";

/** Keys whose values are secrets, by how the key ends (case and `-`/`_` ignored): `apiKey`, `x-api-key`, `newPassword`, `env`. */
const SECRET_KEY =
  /(password|passphrase|passwd|secrets?|token|key|credentials?|authorization|cookie|headers?|env|privatekey)$/;

function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key.toLowerCase().replace(/[-_]/g, ""));
}

/** Strings that look like a credential whatever key they sit under. */
const SECRET_VALUE = [
  /\bdsk_[A-Za-z0-9_-]{8,}/g, // Dimsum API tokens
  /\bsk-[A-Za-z0-9_-]{8,}/g, // OpenAI-style and Anthropic keys
  /\b(xox[abprs]|ghp|gho|github_pat|glpat|AKIA)[A-Za-z0-9_-]{8,}/g,
  /\bBearer\s+[A-Za-z0-9._~+/-]{8,}=*/gi,
  /(:\/\/[^/\s:@]+:)[^@\s/]+@/g, // passwords in URLs
];

function redactString(value: string): string {
  let out = value;
  for (const pattern of SECRET_VALUE) {
    out = out.replace(pattern, (match, userPart: unknown) =>
      typeof userPart === "string" && match.startsWith("://") ? `${userPart}${REDACTED}@` : REDACTED,
    );
  }
  return out;
}

/** A copy of `value` with every secret replaced (depth-limited; cycles and functions dropped). */
export function redactSecrets(value: unknown, depth = 0): unknown {
  if (value === null || value === undefined) return value;
  if (typeof value === "string") return redactString(value);
  if (typeof value === "number" || typeof value === "boolean") return value;
  if (depth > 8) return "[…]";
  if (Array.isArray(value)) return value.slice(0, 200).map((v) => redactSecrets(v, depth + 1));
  if (typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
      if (v === undefined) continue;
      const secret = isSecretKey(key) && v !== null && v !== "" && typeof v !== "boolean";
      out[key] = secret ? REDACTED : redactSecrets(v, depth + 1);
    }
    return out;
  }
  return undefined;
}
