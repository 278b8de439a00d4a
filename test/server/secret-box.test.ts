/** The secret box: a key file per data directory, or one key given to every instance. */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { openSecretBox } from "../../src/server/settings/secret-box.js";

const home = () => mkdtempSync(join(tmpdir(), "dimsum-secret-box-"));

describe("secret box", () => {
  it("seals with the data directory's key file, created once, and opens only with it", () => {
    const dir = home();
    const box = openSecretBox(dir);
    const sealed = box.seal("sk-provider-key");
    expect(sealed).toMatch(/^v1:/);
    expect(sealed).not.toContain("sk-provider-key");
    expect(openSecretBox(dir).open(sealed)).toBe("sk-provider-key");
    expect(openSecretBox(home()).open(sealed)).toBeUndefined();
  });

  it("with a given key, instances with different (even empty) homes open each other's values", () => {
    const first = home();
    const fromFile = openSecretBox(first).seal("shared-secret");
    // The content of an existing key file is a valid shared key: a team moving to several instances keeps its values.
    const key = readFileSync(join(first, "secret.key"), "utf8").trim();
    const empty = home();
    const box = openSecretBox(empty, { key });
    expect(box.open(fromFile)).toBe("shared-secret");
    expect(openSecretBox(home(), { key }).open(box.seal("other"))).toBe("other");
    // The home is left alone: no key file appears beside a given key.
    expect(existsSync(join(empty, "secret.key"))).toBe(false);
  });

  it("refuses a key that is not 32 bytes of base64, saying how to make one", () => {
    for (const key of ["", "c2hvcnQ=", "not base64 at all, clearly not!!!!!!!!!!!!!!!!"]) {
      let error: { code?: string; hint?: string } | undefined;
      try {
        openSecretBox(home(), { key });
      } catch (err) {
        error = err as { code?: string; hint?: string };
      }
      expect(error?.code).toBe("config");
      expect(error?.hint).toContain("openssl rand -base64 32");
    }
  });

  it("takes the shared key from DIMSUM_SECRET_KEY", () => {
    const dir = home();
    const env = { DIMSUM_HOME: dir, DIMSUM_SECRET_KEY: " a2V5 \n" };
    expect(loadConfig({ cwd: dir, env }).server.secretKey).toBe("a2V5");
    expect(loadConfig({ cwd: dir, env: { DIMSUM_HOME: dir } }).server.secretKey).toBeUndefined();
  });
});
