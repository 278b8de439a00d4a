/**
 * A chat's processes in real headless Chromium, with the real sandbox and a scripted model: the
 * agent starts a small web server; the chat header's Processes button lists it with its output, a
 * Stop button and the preview link, which opens the page for a reader of the chat and is 404 for
 * another member and for anyone signed out. Screenshots at desktop and phone sizes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveShellOffer } from "../../src/capabilities/shell-offer.js";
import { loadConfig } from "../../src/config/load-config.js";
import { createServer, type Listening } from "../../src/server/app.js";
import { buildTeam } from "../../src/server/compose.js";
import { mountProcessRoutes } from "../../src/server/previews/process-routes.js";
import { mountTeamRoutes } from "../../src/server/routes/team.js";
import { openSecretBox } from "../../src/server/settings/secret-box.js";
import { SettingsStore } from "../../src/server/settings/settings-store.js";
import { type Database, openDatabase } from "../../src/store/database.js";
import type { Team, TeamRun } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { BrowserSessions } from "../../src/tools/browser/browser-sessions.js";
import { detectSandbox } from "../../src/tools/builtin/sandbox/detect.js";
import { ProcessManager } from "../../src/tools/process/process-manager.js";
import { DEFAULT_PROCESS_SETTINGS } from "../../src/tools/process/types.js";
import { launchChromium, openPage, pageApi, resetArtifacts, screenshot } from "./browser.js";
import { assertWebBuilt, WEB_DIST } from "./e2e-server.js";
import { setUpOwner } from "./stack.js";

const sandboxed = (await detectSandbox("/usr/bin/bwrap")).available;
let home: string;
let db: Database;
let team: Team;
let processes: ProcessManager;
let browserSessions: BrowserSessions;
let fake: FakeLlmServer;
let listening: Listening;
let browser: Browser;
let page: Page;

const SERVER = `node -e "require('http').createServer((q,s)=>{console.log('request '+q.url);s.setHeader('content-type','text/html');s.end('<h1 id=hello>Hello from the sandbox</h1>')}).listen(5173,'127.0.0.1',()=>console.log('listening on 5173'))"`;

beforeAll(async () => {
  if (!sandboxed) return;
  assertWebBuilt();
  resetArtifacts("processes");
  fake = await startFakeLlmServer({ defaultTurn: { text: "It runs." } });
  home = mkdtempSync(join(tmpdir(), "dimsum-e2e-proc-"));
  db = openDatabase(join(home, "dimsum.db"));
  const config = loadConfig({
    cwd: home,
    env: {
      DIMSUM_HOME: home,
      DIMSUM_MODEL: "openai:gpt-test",
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: `${fake.url}/v1`,
      PATH: process.env.PATH ?? "/usr/bin:/bin",
    },
  });
  const log = { info: () => {}, warn: () => {}, error: () => {} };
  const settings = new SettingsStore(db, openSecretBox(home));
  const shell = await resolveShellOffer(config.tools.shell);
  processes = new ProcessManager({ settings: DEFAULT_PROCESS_SETTINGS });
  browserSessions = new BrowserSessions({ processes });
  team = await buildTeam({
    db,
    config,
    settings,
    log,
    cwd: home,
    shell,
    processes,
    browser: browserSessions,
  });
  const routes = mountProcessRoutes(team, processes);
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
    routes: [mountTeamRoutes({ team }), routes.api],
    publicRoutes: [routes.previews],
  });
  listening = await server.listen(0, "127.0.0.1");
  browser = await launchChromium();
  page = (await openPage(browser)).page;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await browserSessions?.closeAll();
  await processes?.closeAll();
  await listening?.close();
  await team?.close();
  db?.close();
  await fake?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe.skipIf(!sandboxed)("the chat's processes in the web UI", () => {
  it("lists the process with its output, opens its preview for readers only, and stops it", async () => {
    const url = listening.url;
    await setUpOwner(page, url, "owner-password-1");
    await page.getByTestId("home-page").waitFor();
    await pageApi(page, url, "POST", "/api/users", {
      username: "bob",
      password: "bob-password-1",
      role: "member",
    });
    const channel = await pageApi<{ id: string }>(page, url, "POST", "/api/channels", {
      kind: "direct",
      name: "Dev server",
      leaderAgentId: "assistant",
      agentIds: ["assistant"],
      userIds: [],
    });
    fake.enqueue(
      { toolCalls: [{ name: "process_start", args: { name: "web", command: SERVER } }] },
      { toolCalls: [{ name: "process_read", args: { name: "web", waitForPort: 5173 } }] },
      { text: "The page is served on port 5173." },
    );
    const posted = await pageApi<{ runs: TeamRun[] }>(
      page,
      url,
      "POST",
      `/api/channels/${channel.id}/messages`,
      {
        text: "serve a page",
      },
    );
    const runId = posted.runs[0]?.id as string;
    for (;;) {
      const run = await pageApi<TeamRun>(page, url, "GET", `/api/runs/${runId}`);
      if (run.status !== "running" && run.status !== "queued") break;
      await page.waitForTimeout(100);
    }
    await page.goto(`${url}/c/${channel.id}`);
    await page.getByTestId("chat-page").waitFor();
    await page.getByTestId("processes-button").click();
    const dialog = page.getByTestId("processes-dialog");
    await dialog.waitFor();
    await expect
      .poll(() => dialog.getByTestId("process-output").textContent())
      .toContain("listening on 5173");
    const link = dialog.getByTestId("process-preview");
    expect(await link.textContent()).toBe("Open the preview of port 5173");
    await screenshot(page, "processes/dialog-desktop");
    // At phone size, opened afresh (the header button keeps to its row, the dialog fits the width).
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await page.getByTestId("processes-button").click();
    await expect
      .poll(() => dialog.getByTestId("process-output").textContent())
      .toContain("listening on 5173");
    await screenshot(page, "processes/dialog-phone");
    await page.setViewportSize({ width: 1280, height: 860 });
    await page.reload();
    await page.getByTestId("processes-button").click();

    // The preview opens in a new tab for the owner (a reader of the chat).
    const href = (await link.getAttribute("href")) as string;
    const [tab] = await Promise.all([page.context().waitForEvent("page"), link.click()]);
    await tab.waitForLoadState();
    expect(await tab.locator("#hello").textContent()).toBe("Hello from the sandbox");
    await screenshot(tab, "processes/preview-desktop");
    await tab.close();

    // Another member and a signed-out browser get 404.
    const other = await browser.newContext();
    const bobPage = await other.newPage();
    const signedOut = await bobPage.goto(`${url}${href}`);
    expect(signedOut?.status()).toBe(404);
    const login = await bobPage.request.post(`${url}/api/auth/login`, {
      data: { username: "bob", password: "bob-password-1" },
    });
    expect(login.ok()).toBe(true);
    const asBob = await bobPage.goto(`${url}${href}`);
    expect(asBob?.status()).toBe(404);
    await other.close();

    // The agent looks at the page with the browser tool: the screenshot reaches the model as an image.
    fake.enqueue(
      { toolCalls: [{ name: "browser", args: { action: "open", url: "http://localhost:5173/" } }] },
      { toolCalls: [{ name: "browser", args: { action: "screenshot" } }] },
      { text: "Here it is." },
    );
    const looked = await pageApi<{ runs: TeamRun[] }>(
      page,
      url,
      "POST",
      `/api/channels/${channel.id}/messages`,
      {
        text: "show me a screenshot",
      },
    );
    for (;;) {
      const run = await pageApi<TeamRun>(page, url, "GET", `/api/runs/${looked.runs[0]?.id}`);
      if (run.status !== "running" && run.status !== "queued") break;
      await page.waitForTimeout(100);
    }
    const lastBody = JSON.stringify(fake.requests.at(-1)?.body);
    expect(lastBody).toContain("Opened http://localhost:5173/ (200)");
    expect(lastBody).toContain("data:image/png;base64,");

    // Stop from the dialog.
    await dialog.getByTestId("process-stop").click();
    await expect
      .poll(() => dialog.getByTestId("process-item").textContent())
      .toContain("stopped: stopped by");
    await screenshot(page, "processes/stopped-desktop");
  }, 90_000);
});
