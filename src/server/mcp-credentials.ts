/**
 * The team server's per-person MCP sign-ins: `DIMSUM_HOME/mcp-credentials/people/<person>/`, one
 * sealed file per server, encrypted with the secret box the server keeps its provider keys with.
 */
import { join } from "node:path";
import type { CredentialStore } from "../mcp/oauth/credential-store.js";
import { fileCredentialStore, hashedName, type Sealer } from "../mcp/oauth/file-store.js";
import { openSecretBox } from "./settings/secret-box.js";

/** A factory of each person's store (the box is opened once, on first use). */
export function personalMcpCredentials(home: string): (person: string) => CredentialStore {
  let box: Sealer | undefined;
  const sealer = () => {
    box ??= openSecretBox(home);
    return box;
  };
  return (person) => fileCredentialStore(join(home, "mcp-credentials", "people", hashedName(person)), sealer);
}
