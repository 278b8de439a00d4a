/**
 * The team server's per-person MCP sign-ins: one sealed record per person and server in the
 * database (`McpCredentialRepository`), encrypted with the secret box the server keeps its provider
 * keys with. Sign-ins an older version kept as files under `DIMSUM_HOME/mcp-credentials/people/`
 * move into the database the first time they are read.
 */
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { type CredentialStore, sealedCredentialStore } from "../mcp/oauth/credential-store.js";
import { hashedName, type Sealer } from "../mcp/oauth/file-store.js";
import type { McpCredentialRepository } from "./settings/mcp-credential-store.js";

export interface PersonalCredentialOptions {
  /** DIMSUM_HOME, where an older version kept the sign-ins as files (imported on first read). */
  legacyHome?: string;
}

/** The file an older version kept `person`'s sign-in to `server` in. */
function legacyFile(home: string, person: string, server: string): string {
  return join(home, "mcp-credentials", "people", hashedName(person), `${hashedName(server)}.sealed`);
}

async function readLegacy(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

/** A factory of each person's store; `box` is asked for only when a record is sealed or opened. */
export function personalMcpCredentials(
  records: McpCredentialRepository,
  box: () => Sealer,
  options: PersonalCredentialOptions = {},
): (person: string) => CredentialStore {
  const sealer: Sealer = { seal: (plain) => box().seal(plain), open: (sealed) => box().open(sealed) };
  const { legacyHome } = options;
  return (person) =>
    sealedCredentialStore(
      {
        async read(server) {
          const stored = await records.read(person, server);
          if (stored !== undefined || legacyHome === undefined) return stored;
          const file = legacyFile(legacyHome, person, server);
          const legacy = await readLegacy(file);
          if (legacy === undefined) return undefined;
          await records.write(person, server, legacy);
          await rm(file, { force: true });
          return legacy;
        },
        write: (server, sealed) => records.write(person, server, sealed),
        async remove(server) {
          await records.remove(person, server);
          if (legacyHome !== undefined) await rm(legacyFile(legacyHome, person, server), { force: true });
        },
      },
      sealer,
    );
}
