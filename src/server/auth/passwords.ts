/**
 * Password hashing with scrypt (node:crypto). The stored string carries its own parameters, so they
 * can be raised later without breaking old hashes: `scrypt$<N>$<r>$<p>$<salt b64>$<hash b64>`.
 */
import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from "node:crypto";

const KEY_LENGTH = 64;
const SALT_BYTES = 16;
/** Cost 2^15 with r=8: 32 MiB of memory and ~100-300 ms of one libuv thread per hash on a small machine. */
/** Refuse absurd parameters read from a tampered database rather than burn the CPU on them. */
const MAX_N = 2 ** 20;

export interface ScryptParams {
  N: number;
  r: number;
  p: number;
}

export const DEFAULT_SCRYPT_PARAMS: Readonly<ScryptParams> = { N: 2 ** 15, r: 8, p: 1 };

function derive(password: string, salt: Buffer, params: ScryptParams, keyLength: number): Promise<Buffer> {
  const options: ScryptOptions = {
    N: params.N,
    r: params.r,
    p: params.p,
    maxmem: 256 * params.N * params.r + 1024,
  };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize("NFC"), salt, keyLength, options, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

/** Hashes a password with a fresh random salt; the result is safe to store. */
export async function hashPassword(
  password: string,
  params: ScryptParams = DEFAULT_SCRYPT_PARAMS,
): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, params, KEY_LENGTH);
  return ["scrypt", params.N, params.r, params.p, salt.toString("base64"), key.toString("base64")].join("$");
}

interface ParsedHash {
  params: ScryptParams;
  salt: Buffer;
  key: Buffer;
}

/** Splits a stored hash; undefined when it is not one of ours. */
export function parsePasswordHash(stored: string): ParsedHash | undefined {
  const parts = stored.split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return undefined;
  const [N, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  if (![N, r, p].every((n) => Number.isInteger(n) && n > 0) || N > MAX_N || r > 32 || p > 16)
    return undefined;
  const salt = Buffer.from(parts[4] ?? "", "base64");
  const key = Buffer.from(parts[5] ?? "", "base64");
  if (salt.length < 8 || key.length < 16) return undefined;
  return { params: { N, r, p }, salt, key };
}

/** Checks a password against a stored hash in constant time; false for malformed hashes. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parsePasswordHash(stored);
  if (!parsed) return false;
  const candidate = await derive(password, parsed.salt, parsed.params, parsed.key.length);
  return timingSafeEqual(candidate, parsed.key);
}

const dummyHashes = new Map<string, Promise<string>>();

/**
 * Burns the same scrypt work as a real check, for logins naming an unknown user, so response time
 * does not reveal which usernames exist. Always resolves false.
 */
export async function verifyAgainstDummy(
  password: string,
  params: ScryptParams = DEFAULT_SCRYPT_PARAMS,
): Promise<false> {
  const key = `${params.N}/${params.r}/${params.p}`;
  let dummy = dummyHashes.get(key);
  if (!dummy) {
    dummy = hashPassword(randomBytes(16).toString("hex"), params);
    dummyHashes.set(key, dummy);
  }
  await verifyPassword(password, await dummy);
  return false;
}
