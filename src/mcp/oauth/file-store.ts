/**
 * Sign-ins kept as one sealed file per server in a folder (mode 0600): the CLI's under
 * `DIMSUM_HOME/mcp-credentials/`, the team server's one folder per person. Names are hashed, so any
 * server or person name is a safe file name. The caller supplies the secret box.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type CredentialStore, sealedCredentialStore } from "./credential-store.js";

export interface Sealer {
  seal(plain: string): string;
  open(sealed: string): string | undefined;
}

export function hashedName(name: string): string {
  return createHash("sha256").update(name).digest("hex").slice(0, 32);
}

/** The store over `dir`; `box` is asked for only when a record is read or written. */
export function fileCredentialStore(dir: string, box: () => Sealer): CredentialStore {
  const file = (server: string) => join(dir, `${hashedName(server)}.sealed`);
  return sealedCredentialStore(
    {
      async read(server) {
        try {
          return await readFile(file(server), "utf8");
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
          throw err;
        }
      },
      async write(server, sealed) {
        await mkdir(dir, { recursive: true, mode: 0o700 });
        await writeFile(file(server), sealed, { mode: 0o600 });
      },
      async remove(server) {
        await rm(file(server), { force: true });
      },
    },
    { seal: (plain) => box().seal(plain), open: (sealed) => box().open(sealed) },
  );
}
