/**
 * The connectors page in real headless Chromium: the DingTalk, WeCom and Feishu forms with their
 * setup steps and where each value is found (screenshots at 1440×900 and 390×844, nothing scrolling
 * sideways), a Feishu long-connection connector whose connection Feishu refuses showing "failing"
 * with Feishu's words, and a bad secret refused in the console's words.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { FakeFeishu } from "../../src/testing/fake-feishu.js";
import {
  animationsSettled,
  flow,
  type PageLog,
  resetArtifacts,
  screenshot,
  sidewaysOverflow,
} from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack, setUpOwner } from "./stack.js";

const PASSWORD = "owner-password-1";
const SIZES = [
  { name: "1440", width: 1440, height: 900 },
  { name: "390", width: 390, height: 844 },
] as const;

/** Resizes and waits for the layout's transitions (the sidebar drawer) to finish. */
async function resize(page: Page, size: { width: number; height: number }): Promise<void> {
  await page.setViewportSize(size);
  await animationsSettled(page);
}

describe("Connectors page", () => {
  let page: Page;
  let log: PageLog;
  let server: E2eServer;
  e2eStack({ before: () => resetArtifacts("connectors"), server: { connectors: true } }, (stack) => {
    page = stack.page;
    log = stack.log;
    server = stack.server;
  });

  it("shows each platform's form with its setup steps and where to find every value", async () => {
    await flow(page, log, server.logLines, "connectors/open", async () => {
      await setUpOwner(page, server.url, PASSWORD);
      await page.getByTestId("nav-connectors").click();
      await page.getByTestId("connector-create").waitFor();
    });
    const form = page.getByTestId("connector-create");
    for (const type of ["dingtalk", "wecom", "feishu"] as const) {
      await flow(page, log, server.logLines, `connectors/${type}-form`, async () => {
        await page.setViewportSize({ width: 1440, height: 900 });
        await page.getByTestId("connector-type").selectOption(type);
        await form.getByTestId("connector-guide").waitFor();
        const text = (await form.textContent()) ?? "";
        if (type === "dingtalk") {
          expect(text).toContain("Stream mode needs no public address");
          expect(text).toContain("Credentials & Basic Info");
          expect(await form.getByTestId("connector-field-clientSecret").getAttribute("type")).toBe(
            "password",
          );
        }
        if (type === "wecom") {
          expect(text).toContain("Set API Receiving");
          expect(text).toContain("AgentId");
          expect(text).toContain("Trusted IP");
        }
        if (type === "feishu") {
          expect(text).toContain("The long connection needs no public address");
          expect(text).toContain("for images and files people send, also im:message:readonly");
          // The webhook's keys show only for the webhook.
          expect(await form.getByTestId("connector-field-encryptKey").count()).toBe(0);
          await page.getByTestId("connector-field-mode").selectOption("webhook");
          await form.getByTestId("connector-field-encryptKey").waitFor();
          expect((await form.textContent()) ?? "").toContain("Encryption Strategy");
        }
        for (const size of SIZES) {
          await resize(page, size);
          await form.scrollIntoViewIfNeeded();
          expect(await sidewaysOverflow(page)).toBe(0);
          await screenshot(page, `connectors/${type}-form-${size.name}`);
          if (size.name === "390") {
            // The rest of the form, below the first screen.
            await page.getByTestId("connector-create-submit").scrollIntoViewIfNeeded();
            await screenshot(page, `connectors/${type}-form-${size.name}-end`);
          }
        }
        if (type === "feishu") await page.getByTestId("connector-field-mode").selectOption("long-connection");
      });
    }
    await page.setViewportSize({ width: 1440, height: 900 });
  }, 90_000);

  it("refuses a bad secret in the console's words, and shows a refused long connection as failing", async () => {
    const feishu = await FakeFeishu.start("cli_a1b2c3d4e5f60718");
    await feishu.longConnection();
    feishu.refuseLongConnection({ code: 1000040350, msg: "the app has not enabled the long connection" });
    try {
      await flow(page, log, server.logLines, "connectors/bad-secret", async () => {
        await page.getByTestId("connector-type").selectOption("telegram");
        await page.getByTestId("connector-name").fill("Telegram bot");
        await page.getByTestId("connector-field-botToken").fill("not-a-token");
        await page.getByTestId("connector-create-submit").click();
        await page.getByText("The Telegram Bot token you entered is not valid").first().waitFor();
        expect(await page.locator("body").textContent()).not.toContain('"botToken"');
      });
      await flow(page, log, server.logLines, "connectors/feishu-failing", async () => {
        await page.getByTestId("connector-type").selectOption("feishu");
        await page.getByTestId("connector-name").fill("Feishu bot");
        await page.getByTestId("connector-field-appId").fill("cli_a1b2c3d4e5f60718");
        await page.getByTestId("connector-field-appSecret").fill(feishu.appSecret);
        await page.getByTestId("connector-field-baseUrl").fill(feishu.url);
        await page.getByTestId("connector-create-submit").click();
        const row = page.locator('[data-testid="connector-row"]').filter({ hasText: "Feishu bot" });
        await row.waitFor();
        expect(await row.getByTestId("connector-no-inbound").count()).toBe(1);
        // The long connection needs only the App Secret.
        expect(await row.textContent()).not.toContain("Still to enter");
        await row.getByTestId("connector-toggle").click();
        const failing = page.locator('[data-testid="connector-row"][data-state="failing"]');
        await failing.waitFor({ timeout: 15_000 });
        expect(await failing.getByTestId("connector-state").textContent()).toBe("failing");
        expect(await failing.getByTestId("connector-error").textContent()).toContain(
          "the app has not enabled the long connection",
        );
        for (const size of SIZES) {
          await resize(page, size);
          expect(await sidewaysOverflow(page)).toBe(0);
          await screenshot(page, `connectors/feishu-failing-${size.name}`);
        }
        await page.setViewportSize({ width: 1440, height: 900 });
        await failing.getByTestId("connector-toggle").click();
        await page.locator('[data-testid="connector-row"][data-state="stopped"]').waitFor();
      });
    } finally {
      await feishu.close();
    }
  }, 90_000);
});
