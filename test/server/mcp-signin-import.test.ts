/** Per-person MCP sign-ins an older version kept as files move into the server's database. */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fileCredentialStore, hashedName } from "../../src/mcp/oauth/file-store.js";
import { personalMcpCredentials } from "../../src/server/mcp-credentials.js";
import {
  importLegacySignIns,
  legacySignInFolder,
  SqliteMcpCredentials,
} from "../../src/server/settings/mcp-credential-store.js";
import { openSecretBox } from "../../src/server/settings/secret-box.js";
import { openDatabase } from "../../src/store/database.js";

const state = (token: string) => ({
  url: "https://mcp.example/mcp",
  tokens: { access_token: token, token_type: "Bearer" },
});

describe("MCP sign-ins from files", () => {
  it("moves each file into the database as it was sealed, once, keeping newer database records", async () => {
    const home = mkdtempSync(join(tmpdir(), "dimsum-signin-import-"));
    const box = openSecretBox(home);
    const db = openDatabase(join(home, "dimsum.db"));
    try {
      // What the previous version's file store wrote, one folder per person.
      const folder = (person: string) => join(legacySignInFolder(home), hashedName(person));
      await fileCredentialStore(folder("ann"), () => box).save("notes", state("at-ann-file"));
      await fileCredentialStore(folder("bob"), () => box).save("notes", state("at-bob-file"));
      const records = new SqliteMcpCredentials(db);
      const people = personalMcpCredentials(records, () => box);
      // Bob signed in again since: the database's record is the newer one.
      await people("bob").save("notes", state("at-bob-db"));

      expect(await importLegacySignIns(db, home)).toBe(2);
      expect(await people("ann").load("notes")).toEqual(state("at-ann-file"));
      expect(await people("bob").load("notes")).toEqual(state("at-bob-db"));
      expect(existsSync(folder("ann"))).toBe(false);
      expect(existsSync(folder("bob"))).toBe(false);
      expect(await importLegacySignIns(db, home)).toBe(0);
      const rows = db
        .prepare("SELECT value_json FROM server_settings WHERE key LIKE 'mcpCredential:%'")
        .all();
      expect(JSON.stringify(rows)).not.toContain("at-ann-file");
    } finally {
      db.close();
    }
  });

  it("does nothing for a home without such files", async () => {
    const home = mkdtempSync(join(tmpdir(), "dimsum-signin-import-"));
    const db = openDatabase(join(home, "dimsum.db"));
    try {
      expect(await importLegacySignIns(db, home)).toBe(0);
    } finally {
      db.close();
    }
  });
});
