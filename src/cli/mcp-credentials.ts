/**
 * The CLI's MCP sign-ins: one file per server under `$DIMSUM_HOME/mcp-credentials/`, each sealed
 * with the data directory's secret box (AES-256-GCM, key in `$DIMSUM_HOME/secret.key`), mode 0600.
 */
import { join } from "node:path";
import type { CredentialStore } from "../mcp/oauth/credential-store.js";
import { fileCredentialStore, type Sealer } from "../mcp/oauth/file-store.js";
import { openSecretBox } from "../server/settings/secret-box.js";

export const MCP_CREDENTIALS_DIR = "mcp-credentials";

/** The encrypted store for the CLI; the key is created on first use. */
export function cliCredentialStore(home: string): CredentialStore {
  let box: Sealer | undefined;
  return fileCredentialStore(join(home, MCP_CREDENTIALS_DIR), () => {
    box ??= openSecretBox(home);
    return box;
  });
}
