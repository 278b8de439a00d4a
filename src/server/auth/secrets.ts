/** Random credentials and the one-way hashes we store instead of them. */
import { createHash, randomBytes, randomInt, timingSafeEqual } from "node:crypto";

/** 32 random bytes as base64url (43 characters): session tokens, CSRF tokens. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}

/** A short random id for rows clients may see (session ids, token ids). */
export function randomId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString("base64url")}`;
}

/** SHA-256 hex of a token: tokens are high-entropy, so a fast hash is enough and lookups stay indexed. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** Constant-time string equality (lengths may differ; that alone is not secret). */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, "utf8");
  const right = Buffer.from(b, "utf8");
  return left.length === right.length && timingSafeEqual(left, right);
}

const PASSWORD_ALPHABET = "abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/** A password people can copy from a console: 20 unbiased picks from letters and digits without look-alikes. */
export function randomPassword(length = 20): string {
  let out = "";
  for (let i = 0; i < length; i++) out += PASSWORD_ALPHABET[randomInt(PASSWORD_ALPHABET.length)];
  return out;
}
