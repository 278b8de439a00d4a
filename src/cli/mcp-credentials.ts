/**
 * The CLI's MCP sign-ins: one file per server under `$DIMSUM_HOME/mcp-credentials/`, each sealed
 * with the data directory's secret box (AES-256-GCM, key in `$DIMSUM_HOME/secret.key`), mode 0600.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type CredentialStore, sealedCredentialStore } from "../mcp/oauth/credential-store.js";
import { openSecretBox } from "../server/settings/secret-box.js";

export const MCP_CREDENTIALS_DIR = "mcp-credentials";

/** The file that holds `server`'s sign-in (names are hashed: any server name is a safe file name). */
export function credentialFile(home: string, server: string): string {
  const id = createHash("sha256").update(server).digest("hex").slice(0, 32);
  return join(home, MCP_CREDENTIALS_DIR, `${id}.sealed`);
}

/** The encrypted store for the CLI; the key is created on first use. */
export function cliCredentialStore(home: string): CredentialStore {
  let box: ReturnType<typeof openSecretBox> | undefined;
  const secretBox = () => {
    box ??= openSecretBox(home);
    return box;
  };
  return sealedCredentialStore(
    {
      async read(server) {
        try {
          return await readFile(credentialFile(home, server), "utf8");
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
          throw err;
        }
      },
      async write(server, sealed) {
        await mkdir(join(home, MCP_CREDENTIALS_DIR), { recursive: true, mode: 0o700 });
        await writeFile(credentialFile(home, server), sealed, { mode: 0o600 });
      },
      async remove(server) {
        await rm(credentialFile(home, server), { force: true });
      },
    },
    {
      seal: (plain) => secretBox().seal(plain),
      open: (sealed) => secretBox().open(sealed),
    },
  );
}
