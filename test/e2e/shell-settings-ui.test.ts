/**
 * Settings in real headless Chromium on a server where bubblewrap is missing (the configuration
 * points bwrap at a path that does not exist): the Shell section says the shell is not offered, and
 * why; the tool catalogue leaves it out. Wired as `dimsum serve` wires it (one offer decision, handed
 * to the team and to Settings).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveShellOffer } from "../../src/capabilities/shell-offer.js";
import { loadConfig } from "../../src/config/load-config.js";
import { createServer, type Listening } from "../../src/server/app.js";
import { buildTeam } from "../../src/server/compose.js";
import { mountTeamRoutes } from "../../src/server/routes/team.js";
import { openSecretBox } from "../../src/server/settings/secret-box.js";
import { SettingsStore } from "../../src/server/settings/settings-store.js";
import { type Database, openDatabase } from "../../src/store/database.js";
import type { Team } from "../../src/team/types.js";
import { launchChromium, openPage } from "./browser.js";
import { assertWebBuilt, WEB_DIST } from "./e2e-server.js";
import { setUpOwner } from "./stack.js";

let home: string;
let db: Database;
let team: Team;
let listening: Listening;
let browser: Browser;
let page: Page;
const logLines: string[] = [];

beforeAll(async () => {
  assertWebBuilt();
  home = mkdtempSync(join(tmpdir(), "dimsum-e2e-shell-"));
  writeFileSync(
    join(home, "dimsum.config.json"),
    JSON.stringify({ tools: { shell: { sandbox: { bwrapPath: join(home, "no-bwrap") } } } }),
  );
  db = openDatabase(join(home, "dimsum.db"));
  const config = loadConfig({ cwd: home, env: { DIMSUM_HOME: home } });
  const log = {
    info: () => {},
    warn: (m: string) => logLines.push(m),
    error: (m: string) => logLines.push(m),
  };
  const settings = new SettingsStore(db, openSecretBox(home));
  const shell = await resolveShellOffer(config.tools.shell);
  team = await buildTeam({ db, config, settings, log, cwd: home, shell });
  const server = createServer({
    db,
    config,
    home,
    log,
    team,
    settings,
    shell,
    ensureOwner: false,
    passwordHashParams: { N: 1024, r: 8, p: 1 },
    staticDir: WEB_DIST,
    routes: [mountTeamRoutes({ team })],
  });
  listening = await server.listen(0, "127.0.0.1");
  browser = await launchChromium();
  page = (await openPage(browser)).page;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await listening?.close();
  await team?.close();
  db?.close();
  rmSync(home, { recursive: true, force: true });
});

describe("Settings without a sandbox", () => {
  it("shows that the shell is not offered and why", async () => {
    await setUpOwner(page, listening.url, "owner-password-1");
    await page.getByTestId("home-page").waitFor();
    await page.getByTestId("nav-settings").click();
    await page.getByTestId("settings-tab-shell").click();
    const section = page.getByTestId("settings-shell");
    await section.waitFor();
    expect(await section.getAttribute("data-state")).toBe("not-offered");
    const warning = (await page.getByTestId("shell-warning").textContent()) ?? "";
    expect(warning).toContain("The shell is not offered to agents.");
    expect(warning).toContain("bubblewrap was not found");
    expect(warning).toContain("tools.shell.allowUnsandboxed");
    const tools = await page.evaluate(async () => (await fetch("/api/tools")).json());
    expect((tools as Array<{ name: string }>).map((t) => t.name)).not.toContain("execute_command");
  }, 40_000);
});
