/**
 * The team server's per-person MCP sign-ins: one sealed record per person and server in the
 * database (`McpCredentialRepository`), encrypted with the secret box the server keeps its provider
 * keys with, so every instance on a shared database sees the same sign-ins.
 */
import { type CredentialStore, sealedCredentialStore } from "../mcp/oauth/credential-store.js";
import type { Sealer } from "../mcp/oauth/file-store.js";
import type { McpCredentialRepository } from "./settings/mcp-credential-store.js";

/** A factory of each person's store; `box` is asked for only when a record is sealed or opened. */
export function personalMcpCredentials(
  records: McpCredentialRepository,
  box: () => Sealer,
): (person: string) => CredentialStore {
  const sealer: Sealer = { seal: (plain) => box().seal(plain), open: (sealed) => box().open(sealed) };
  return (person) =>
    sealedCredentialStore(
      {
        read: (server) => records.read(person, server),
        write: (server, sealed) => records.write(person, server, sealed),
        remove: (server) => records.remove(person, server),
      },
      sealer,
    );
}
