import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { emptyConfigFile, readConfigFile } from "../../src/config/config-file.js";

it("gives no file the config that an empty file gets, defaults and all", () => {
  const path = join(mkdtempSync(join(tmpdir(), "dimsum-config-")), "config.json");
  writeFileSync(path, "{}");
  expect(emptyConfigFile()).toEqual(readConfigFile(path));
  expect(readConfigFile(join(path, "..", "missing.json"))).toBeUndefined();
});
