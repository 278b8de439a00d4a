/**
 * The HTTP tools saved in Settings, on SQLite and PostgreSQL through the same contract: header values
 * sealed at rest and left out of views, opened for runs; a duplicate name is refused; an edit with a
 * header value "" keeps the saved one; removal; a run's cached list is read again after a change
 * (here or, through `invalidate`, on another instance).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { HttpTools } from "../../src/server/http-tools.js";
import type { HttpToolSettingsRepository } from "../../src/server/settings/http-tool-settings.js";
import { HttpToolSettings } from "../../src/server/settings/http-tool-settings.js";
import { openSecretBox } from "../../src/server/settings/secret-box.js";
import { openDatabase } from "../../src/store/database.js";
import { postgresDatabase, sqliteDatabase } from "../../src/store/sql-database.js";
import { openTestPostgres, postgresAvailable } from "../support/postgres.js";

const KEY = "store-secret-key-90210";
const home = mkdtempSync(join(tmpdir(), "dimsum-http-tool-store-"));
const box = openSecretBox(home);
const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const c of cleanups) await c();
  rmSync(home, { recursive: true, force: true });
});

const definition = (url = "https://api.example.com/v1") => ({
  name: "lookup",
  description: "Looks up a thing.",
  url,
  headers: { Authorization: `Bearer ${KEY}`, Accept: "application/json" },
});

async function exercise(repo: HttpToolSettingsRepository, raw: () => Promise<string>) {
  expect(await repo.add(definition(), true)).toBe(true);
  expect(await repo.add(definition(), true)).toBe(false);
  expect(await raw()).not.toContain(KEY);
  const views = await repo.list();
  expect(JSON.stringify(views)).not.toContain(KEY);
  expect(views).toEqual([
    {
      name: "lookup",
      definition: { name: "lookup", description: "Looks up a thing.", url: "https://api.example.com/v1" },
      headerNames: ["Authorization", "Accept"],
      enabled: true,
    },
  ]);
  expect((await repo.configs())[0]?.definition.headers).toEqual({
    Authorization: `Bearer ${KEY}`,
    Accept: "application/json",
  });

  // "" keeps the saved value; a header left out is dropped.
  const edited = { ...definition("https://api.example.com/v2"), headers: { Authorization: "" } };
  expect(await repo.update("lookup", edited)).toBe(true);
  expect(await repo.update("nobody", edited)).toBe(false);
  const [config] = await repo.configs();
  expect(config?.definition).toMatchObject({
    url: "https://api.example.com/v2",
    headers: { Authorization: `Bearer ${KEY}` },
  });
  expect(await repo.update("lookup", undefined, false)).toBe(true);
  expect(await repo.configs()).toEqual([]);

  // Runs' cache: read again after a change here, and after `invalidate` (another instance's change).
  const tools = new HttpTools(repo, false);
  let told = 0;
  tools.onChanged = () => told++;
  expect(await tools.forRuns()).toEqual([]);
  await tools.update("lookup", { enabled: true });
  expect(told).toBe(1);
  expect((await tools.forRuns()).map((t) => t.name)).toEqual(["lookup"]);
  expect(await repo.update("lookup", undefined, false)).toBe(true);
  expect((await tools.forRuns()).map((t) => t.name)).toEqual(["lookup"]);
  tools.invalidate();
  expect(await tools.forRuns()).toEqual([]);

  expect(await repo.remove("lookup")).toBe(true);
  expect(await repo.remove("lookup")).toBe(false);
  expect(await repo.list()).toEqual([]);
}

describe("HTTP tool settings", () => {
  it("on SQLite", async () => {
    const db = openDatabase(join(home, "dimsum.db"));
    cleanups.push(() => {
      db.close();
    });
    await exercise(new HttpToolSettings(sqliteDatabase(db), box), async () => {
      const row = db.prepare("SELECT value_json FROM server_settings WHERE key = 'httpTools'").get() as {
        value_json: string;
      };
      return row.value_json;
    });
  });

  it.runIf(postgresAvailable)("on PostgreSQL", async () => {
    const pg = await openTestPostgres();
    cleanups.push(() => pg.dispose());
    await exercise(new HttpToolSettings(postgresDatabase(pg), box), async () => {
      const row = await pg.one<{ value_json: string }>(
        "SELECT value_json FROM server_settings WHERE key = 'httpTools'",
        [],
      );
      return row?.value_json ?? "";
    });
  });
});
