/**
 * The schedules page in headless Chromium against a real server (web UI built into a temp folder
 * from the working tree): the list with next runs, the create form, run now with the agent's answer
 * in the recent runs, the on/off toggle, and delete.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { build } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ScheduleView } from "../../src/schedules/schedule-service.js";
import type { ChannelRecord } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { launchChromium, openPage, type PageLog } from "../e2e/browser.js";
import { call, type Session, withUsers } from "../server/helpers.js";
import { expectJson } from "../server/team-helpers.js";
import { AgentScripts } from "../team/harness.js";
import { type ScheduleServer, startScheduleServer } from "./schedule-server.js";

const scripts = new AgentScripts();
let llm: FakeLlmServer;
let webDir: string;
let browser: Browser;

beforeAll(async () => {
  webDir = mkdtempSync(join(tmpdir(), "dimsum-web-"));
  await build({
    configFile: fileURLToPath(new URL("../../web/vite.config.ts", import.meta.url)),
    build: { outDir: webDir, emptyOutDir: true },
    logLevel: "warn",
  });
  llm = await startFakeLlmServer({ defaultTurn: scripts.turn });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await llm?.close();
  rmSync(webDir, { recursive: true, force: true });
}, 30_000);

const until = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 10_000, interval: 50 });

async function signedInPage(s: ScheduleServer, session: Session): Promise<{ page: Page; log: PageLog }> {
  const opened = await openPage(browser);
  const [name, value] = session.cookie.split("=") as [string, string];
  await opened.page.context().addCookies([{ name, value, url: s.url }]);
  return opened;
}

describe("schedules page", () => {
  it("lists, creates, runs, toggles and deletes schedules", async () => {
    const s = await startScheduleServer(llm.url, Date.now(), webDir);
    const { owner } = await withUsers(s.url);
    const room = await expectJson<ChannelRecord>(
      await call(s.url, "/api/channels", {
        session: owner,
        body: { kind: "group", name: "Room", agentIds: ["writer"], userIds: [] },
      }),
      201,
    );
    await expectJson(
      await call(s.url, "/api/schedules", {
        session: owner,
        body: {
          name: "Morning digest",
          timing: { kind: "cron", expression: "0 9 * * *", timezone: "Asia/Shanghai" },
          target: { type: "agent", agentId: "writer", channelId: room.id, prompt: "digest" },
        },
      }),
      201,
    );
    const { page, log } = await signedInPage(s, owner);
    await page.goto(`${s.url}/`);
    await page.getByTestId("nav-schedules").click();
    await page.getByTestId("schedules-page").waitFor();
    expect(new URL(page.url()).pathname).toBe("/schedules");

    const rows = page.getByTestId("schedule-row");
    await until(() => rows.count()).toBe(1);
    await expect.poll(() => rows.first().textContent()).toContain("cron 0 9 * * * (Asia/Shanghai)");
    expect(await rows.first().getByTestId("schedule-next").textContent()).not.toBe("—");

    // Create one from the form: every 5 minutes, @writer in Room.
    await page.getByTestId("schedule-name").fill("Pulse");
    await page.getByTestId("schedule-kind-interval").click();
    await page.getByTestId("schedule-minutes").fill("5");
    await page.getByTestId("schedule-channel").selectOption(room.id);
    await page.getByTestId("schedule-agent").selectOption("writer");
    await page.getByTestId("schedule-prompt").fill("Check the pulse");
    await page.getByTestId("schedule-create").click();
    await until(() => rows.count()).toBe(2);
    const list = await expectJson<ScheduleView[]>(
      await call(s.url, "/api/schedules", { session: owner }),
      200,
    );
    const pulse = list.find((x) => x.name === "Pulse")!;
    expect(pulse).toMatchObject({
      timing: { kind: "interval", seconds: 300 },
      target: { type: "agent", agentId: "writer", channelId: room.id, prompt: "Check the pulse" },
    });

    // Run it now: the recent runs show it done with the agent's answer.
    scripts.add("writer", { text: "Pulse is steady at 60." });
    const row = page.locator(`[data-schedule-id="${pulse.id}"]`);
    await row.getByTestId("schedule-run-now").click();
    const run = page.getByTestId("schedule-run").first();
    await until(() => run.getAttribute("data-status")).toBe("done");
    await page.getByTestId("schedule-run-summary").first().click();
    expect(await page.getByTestId("schedule-run-text").first().textContent()).toBe("Pulse is steady at 60.");

    // Turn it off, then delete it.
    await row.getByTestId("schedule-enabled").click();
    await until(async () => (await s.scheduling.store.get(pulse.id))?.enabled).toBe(false);
    await until(() => row.getByTestId("schedule-next").textContent()).toBe("—");
    await row.getByTestId("schedule-delete").click();
    // The app's own confirm dialog asks first (never the browser's confirm()).
    await page.getByTestId("confirm-dialog").getByTestId("confirm-ok").click();
    await until(() => rows.count()).toBe(1);
    expect(await s.scheduling.store.get(pulse.id)).toBeUndefined();

    // A form problem is shown, not sent.
    await page.getByTestId("schedule-create").click();
    expect(await page.getByTestId("schedule-form-problem").textContent()).toBe("Give the schedule a name.");
    expect(log.errors().filter((l) => !l.includes("favicon"))).toEqual([]);
    await page.context().close();
  }, 60_000);
});
