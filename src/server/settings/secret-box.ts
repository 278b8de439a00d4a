/**
 * Encrypts provider API keys at rest (AES-256-GCM) with a key file kept beside the database
 * (`$DIMSUM_HOME/secret.key`, mode 0600), so a copied database file alone does not leak them. Several
 * instances on one database server share one key instead, given as `DIMSUM_SECRET_KEY`.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DimsumError } from "../../errors.js";

const KEY_FILE = "secret.key";
const VERSION = "v1";

export interface SecretBox {
  seal(plain: string): string;
  /** Undefined when the value cannot be decrypted (key file replaced or value corrupted). */
  open(sealed: string): string | undefined;
}

function loadOrCreateKey(home: string): Buffer {
  const path = join(home, KEY_FILE);
  const read = (): Buffer | undefined => {
    try {
      const key = Buffer.from(readFileSync(path, "utf8").trim(), "base64");
      if (key.length !== 32) {
        throw new DimsumError("config", `${path} does not hold a 32-byte base64 key`, {
          hint: "restore the original file; deleting it makes stored provider keys unreadable",
        });
      }
      return key;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw err;
    }
  };
  const existing = read();
  if (existing) return existing;
  mkdirSync(home, { recursive: true });
  try {
    writeFileSync(path, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600, flag: "wx" });
  } catch (err) {
    // Another process created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  const created = read();
  if (!created) throw new DimsumError("internal", `could not create ${path}`);
  return created;
}

/** A key given in base64 (`DIMSUM_SECRET_KEY`); a config error unless it holds 32 bytes. */
function keyFrom(base64: string): Buffer {
  const key = Buffer.from(base64, "base64");
  if (key.length !== 32 || key.toString("base64").replace(/=+$/, "") !== base64.trim().replace(/=+$/, "")) {
    throw new DimsumError("config", "DIMSUM_SECRET_KEY is not a 32-byte key in base64", {
      hint: "make one with `openssl rand -base64 32` and give every instance the same one",
    });
  }
  return key;
}

export interface SecretBoxOptions {
  /** The key in base64 (`DIMSUM_SECRET_KEY`); when absent, the data directory's key file. */
  key?: string | undefined;
}

/**
 * The secret box for a data directory, creating its key on first use; or over `options.key`, which
 * then leaves the directory alone.
 */
export function openSecretBox(home: string, options: SecretBoxOptions = {}): SecretBox {
  const key = options.key !== undefined ? keyFrom(options.key) : loadOrCreateKey(home);
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const data = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      return [
        VERSION,
        iv.toString("base64"),
        cipher.getAuthTag().toString("base64"),
        data.toString("base64"),
      ].join(":");
    },
    open(sealed) {
      const [version, iv, tag, data] = sealed.split(":");
      if (version !== VERSION || !iv || !tag || data === undefined) return undefined;
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64"));
        decipher.setAuthTag(Buffer.from(tag, "base64"));
        return Buffer.concat([decipher.update(Buffer.from(data, "base64")), decipher.final()]).toString(
          "utf8",
        );
      } catch {
        return undefined;
      }
    },
  };
}
