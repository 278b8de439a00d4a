/**
 * Feishu/Lark event security, as documented for "send events to the developer's server": the
 * signature `X-Lark-Signature = hex(sha256(timestamp + nonce + encryptKey + rawBody))` over the
 * `X-Lark-Request-Timestamp` and `X-Lark-Request-Nonce` headers, and encrypted bodies
 * `{"encrypt": base64(iv ‖ AES-256-CBC(PKCS#7, key = sha256(encryptKey)))}`.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { constantTimeEqual } from "../signatures.js";

export const LARK_TIMESTAMP_HEADER = "x-lark-request-timestamp";
export const LARK_NONCE_HEADER = "x-lark-request-nonce";
export const LARK_SIGNATURE_HEADER = "x-lark-signature";

/** The signature Feishu sends for a body. */
export function larkSignature(timestamp: string, nonce: string, encryptKey: string, body: string): string {
  return createHash("sha256").update(`${timestamp}${nonce}${encryptKey}${body}`, "utf8").digest("hex");
}

/** True when the request carries a valid signature for this encrypt key. */
export function verifyLarkSignature(
  headers: Record<string, string | undefined>,
  encryptKey: string,
  body: string,
): boolean {
  const timestamp = headers[LARK_TIMESTAMP_HEADER];
  const nonce = headers[LARK_NONCE_HEADER];
  const signature = headers[LARK_SIGNATURE_HEADER];
  if (!timestamp || !nonce || !signature) return false;
  return constantTimeEqual(signature.toLowerCase(), larkSignature(timestamp, nonce, encryptKey, body));
}

function aesKey(encryptKey: string): Buffer {
  return createHash("sha256").update(encryptKey, "utf8").digest();
}

/** Decrypts an `encrypt` field; undefined when it does not decrypt with this key. */
export function decryptLarkEvent(encryptKey: string, encrypted: string): string | undefined {
  const data = Buffer.from(encrypted, "base64");
  if (data.length <= 16 || (data.length - 16) % 16 !== 0) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-cbc", aesKey(encryptKey), data.subarray(0, 16));
    return Buffer.concat([decipher.update(data.subarray(16)), decipher.final()]).toString("utf8");
  } catch {
    return undefined;
  }
}

/** Encrypts a body the way Feishu does (the fake platform and tests use it). */
export function encryptLarkEvent(encryptKey: string, plain: string): string {
  const iv = randomBytes(16);
  const cipher = createCipheriv("aes-256-cbc", aesKey(encryptKey), iv);
  return Buffer.concat([iv, cipher.update(plain, "utf8"), cipher.final()]).toString("base64");
}
