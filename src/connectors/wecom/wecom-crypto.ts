/**
 * WeCom callback security ("加解密方案"), through the official `@wecom/crypto` package (loaded when a
 * WeCom connector starts): the signature `msg_signature = sha1(sort([token, timestamp, nonce,
 * ciphertext]).join(""))`, and the ciphertext `Base64(AES-256-CBC(key = Base64(EncodingAESKey + "="),
 * iv = key[0..16], PKCS#7 to 32 bytes, random(16) ‖ length(4, big-endian) ‖ message ‖ corpId))`.
 * A message is genuine only when the signature matches and it decrypts to this corp's id.
 */
import { importExternal } from "../../import-external.js";
import { constantTimeEqual } from "../signatures.js";

type WecomCrypto = typeof import("@wecom/crypto");

let loaded: Promise<WecomCrypto> | undefined;

/** The `@wecom/crypto` module, imported on first use. */
export function wecomCrypto(): Promise<WecomCrypto> {
  loaded ??= importExternal("@wecom/crypto") as Promise<WecomCrypto>;
  return loaded;
}

/** Verifies and decrypts a ciphertext; a string saying why it is refused otherwise. */
export async function openWecomCiphertext(options: {
  token: string;
  encodingAESKey: string;
  corpId: string;
  signature: string | undefined;
  timestamp: string | undefined;
  nonce: string | undefined;
  ciphertext: string;
}): Promise<{ plain: string } | { refused: string }> {
  const crypto = await wecomCrypto();
  const { signature, timestamp, nonce } = options;
  if (!signature || !timestamp || !nonce) return { refused: "missing msg_signature, timestamp or nonce" };
  const expected = crypto.getSignature(options.token, timestamp, nonce, options.ciphertext);
  if (!constantTimeEqual(signature.toLowerCase(), expected)) {
    return { refused: "msg_signature does not match (check the Token)" };
  }
  let opened: { message: string; id: string };
  try {
    opened = crypto.decrypt(options.encodingAESKey, options.ciphertext);
  } catch {
    return { refused: "the message does not decrypt with this connector's EncodingAESKey" };
  }
  if (opened.id !== options.corpId) {
    return {
      refused:
        "the message does not decrypt to this connector's Corp ID (check the EncodingAESKey and Corp ID)",
    };
  }
  return { plain: opened.message };
}
