/**
 * A new server as its owner meets it, in real headless Chromium against a real server (the
 * `dimsum serve` wiring over SQLite) whose only model key comes from the environment and which has
 * no default model: the first sign-in with the printed one-time password lands on Settings →
 * Account, the password is changed (then used to log in), the home page and the composer say no
 * model can answer and link to Settings → Providers, the first message fails with where to fix it,
 * the environment's OpenAI key is listed as such (never shown), a key and base URL entered for the
 * built-in DeepSeek provider make agents answer, deletes ask through the in-app confirm dialog, the
 * live connection survives a server restart, and a member's home page has no admin links. Screenshots at 1440×900 and 390×844; no page may scroll
 * sideways at 390 px. The steps build on each other, in order.
 */

import { join } from "node:path";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import type { FakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { ARTIFACTS_DIR, flow, PageLog as Log, type PageLog, resetArtifacts } from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack } from "./stack.js";

const STEP_TIMEOUT_MS = 40_000;
const ENV_KEY = "sk-env-5f3a9c1e7b2d4f60OPENAIENV";
const DEEPSEEK_KEY = "sk-deepseek-typed-in-the-ui-4242";
const NEW_PASSWORD = "my-own-password-77";
const MEMBER_PASSWORD = "member-password-1";
const ANSWER = "Hello from DeepSeek through the fake LLM.";
const WIDE = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };

let llm: FakeLlmServer;
let server: E2eServer;
let browser: Browser;
let page: Page;
let log: PageLog;
let channelId = "";

const byTest = (id: string) => page.getByTestId(id);
const step = (name: string, body: () => Promise<void>) => flow(page, log, server.logLines, name, body);
const text = async (locator: Locator) => ((await locator.textContent()) ?? "").replace(/\s+/g, " ").trim();
const until = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 10_000, interval: 50 });
const provider = (name: string) => page.locator(`[data-testid="provider"][data-provider="${name}"]`);

/** Screenshots the page at both sizes as `onboarding/<name>-wide.png` and `-phone.png`, checking the phone has no sideways scroll. */
async function shoot(target: Page, name: string): Promise<void> {
  await target.setViewportSize(WIDE);
  await settledShot(target, `onboarding/${name}-wide`);
  await target.setViewportSize(PHONE);
  await expect.poll(() => sidewaysOverflow(target), { timeout: 5_000 }).toBe(0);
  await settledShot(target, `onboarding/${name}-phone`);
  await target.setViewportSize(WIDE);
}

/** A full-page screenshot with CSS transitions finished (the drawer slides away on a resize). */
async function settledShot(target: Page, name: string): Promise<void> {
  await target.screenshot({
    path: join(ARTIFACTS_DIR, `${name}.png`),
    fullPage: true,
    animations: "disabled",
  });
}

/** How many pixels the page is wider than the viewport (0 when nothing scrolls sideways). */
function sidewaysOverflow(target: Page): Promise<number> {
  return target.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}

async function logIn(target: Page, username: string, password: string): Promise<void> {
  await target.getByTestId("login-form").waitFor();
  await target.getByTestId("login-username").fill(username);
  await target.getByTestId("login-password").fill(password);
  await target.getByTestId("login-submit").click();
}

async function apiGet<T>(path: string): Promise<T> {
  const res = await page.request.get(server.url + path);
  if (res.status() !== 200) throw new Error(`GET ${path}: ${res.status()} ${await res.text()}`);
  return (await res.json()) as T;
}

e2eStack(
  {
    before: () => resetArtifacts("onboarding"),
    llm: { defaultTurn: { text: ANSWER } },
    server: {
      ensureOwner: true,
      // An OpenAI key in the environment, but no default model: nothing can answer yet.
      env: { OPENAI_API_KEY: ENV_KEY },
    },
  },
  (stack) => {
    ({ llm, server, browser, page, log } = stack);
    // Every confirmation must go through the in-app dialog; a native one fails the test.
    page.on("dialog", (dialog) => {
      log.lines.push(`pageerror: native ${dialog.type()} dialog opened: ${dialog.message()}`);
      void dialog.dismiss();
    });
  },
);

describe("onboarding in headless Chromium", () => {
  it(
    "first sign-in with the printed one-time password lands on Settings → Account",
    async () => {
      await step("onboarding/01-one-time-password", async () => {
        const password = server.owner?.generatedPassword;
        expect(password).toMatch(/^[A-Za-z0-9]{20}$/);
        const printed = server.infoLines.find((l) => l.includes("one-time password")) ?? "";
        expect(printed).toContain(password);
        expect(printed).toContain("Settings → Account");
        await page.goto(server.url);
        await logIn(page, "owner", password!);
        await page.waitForURL(/\/settings\/account$/);
        await byTest("one-time-password-notice").waitFor();
        expect(await byTest("password-current").getAttribute("autocomplete")).toBe("current-password");
        // The one-time password was just typed to sign in: the field that asks for it (there after a
        // reload too, empty then) is filled in already.
        expect(await byTest("password-current").isVisible()).toBe(true);
        expect(await byTest("password-current").inputValue()).toBe(password);
        expect(await byTest("password-new").getAttribute("autocomplete")).toBe("new-password");
        expect(await byTest("password-confirm").getAttribute("autocomplete")).toBe("new-password");
        expect(await byTest("settings-tab-account").getAttribute("aria-current")).toBe("page");
        await shoot(page, "01-account");
      });
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "changes the password, then logs in with the new one (the old one is refused)",
    async () => {
      await step("onboarding/02-password-changed", async () => {
        const oneTime = server.owner!.generatedPassword!;
        await byTest("password-new").fill(NEW_PASSWORD);
        await byTest("password-confirm").fill(`${NEW_PASSWORD}-typo`);
        await byTest("password-submit").click();
        expect(await text(byTest("password-problem"))).toContain("differ");
        await byTest("password-confirm").fill(NEW_PASSWORD);
        await byTest("password-submit").click();
        await page.getByTestId("notice").filter({ hasText: "Password changed" }).waitFor();
        await until(() => byTest("one-time-password-notice").count()).toBe(0);

        await byTest("logout").click();
        await logIn(page, "owner", oneTime);
        await byTest("login-error").waitFor();
        await byTest("login-password").fill(NEW_PASSWORD);
        await byTest("login-submit").click();
        // Signed in again where they were, and no longer asked to choose a password.
        await byTest("password-form").waitFor();
        expect(await byTest("one-time-password-notice").count()).toBe(0);
        await page.locator(".brand").click();
        await byTest("home-page").waitFor();
      });
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "with no model, the home page says so and links to Settings → Providers",
    async () => {
      await step("onboarding/03-home-no-model", async () => {
        const notice = byTest("model-notice");
        await notice.waitFor();
        expect(await notice.getAttribute("data-problem")).toBe("no_default_model");
        expect(await text(notice)).toContain("No model is set up yet");
        expect(await byTest("home-manage-agents").count()).toBe(1);
        await shoot(page, "03-home-no-model");
        expect(await text(byTest("home-hint"))).not.toContain("on the left");
        await byTest("model-notice-link").click();
        await page.waitForURL(/\/settings\/providers$/);
        await byTest("settings-provider-list").waitFor();
      });
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "lists every built-in provider, the environment's OpenAI key marked as such and never shown",
    async () => {
      await step("onboarding/04-providers", async () => {
        const names = await page
          .locator('[data-testid="settings-provider-list"] [data-testid="provider"]')
          .evaluateAll((els) => els.map((el) => el.getAttribute("data-provider")));
        expect(names).toEqual([
          "openai",
          "anthropic",
          "gemini",
          "deepseek",
          "qwen",
          "kimi",
          "glm",
          "minimax",
          "xai",
          "perplexity",
          "openrouter",
          "ollama",
        ]);
        const openai = provider("openai");
        expect(await openai.getByTestId("provider-key-status").getAttribute("data-source")).toBe(
          "environment",
        );
        expect(await text(openai.getByTestId("provider-key-status"))).toBe("key from environment");
        expect(await text(openai.getByTestId("provider-source"))).toContain(
          "Key from environment (OPENAI_API_KEY)",
        );
        expect(await text(provider("anthropic").getByTestId("provider-key-status"))).toBe("no key");
        expect(await text(provider("ollama").getByTestId("provider-key-status"))).toBe("no key needed");
        const html = await page.content();
        expect(html).not.toContain(ENV_KEY);
        expect(html).not.toContain(ENV_KEY.slice(-4));
        // The default model is an ordinary one-line field.
        const box = await byTest("default-model-input").boundingBox();
        expect(box?.height).toBeLessThan(48);
        expect(await text(byTest("settings-model-status"))).toContain("No default model yet");
        await shoot(page, "04-providers");

        // Every other settings tab fits a phone too.
        await page.setViewportSize(PHONE);
        for (const tab of ["tokens", "mcp", "people", "account", "providers"]) {
          await byTest(`settings-tab-${tab}`).click();
          await until(() => byTest("settings-page").getAttribute("data-section")).toBe(tab);
          await expect.poll(() => sidewaysOverflow(page), { timeout: 5_000 }).toBe(0);
        }
        await page.setViewportSize(WIDE);
      });
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "in a chat, the composer warns, and the first message fails saying where to fix it",
    async () => {
      await step("onboarding/05-chat-no-model", async () => {
        await byTest("new-channel").click();
        await byTest("new-channel-kind-direct").click();
        await byTest("new-channel-agent-assistant").check();
        await byTest("new-channel-submit").click();
        await byTest("chat-page").waitFor();
        channelId = (await byTest("chat-page").getAttribute("data-channel-id")) ?? "";
        const composerNotice = byTest("composer").getByTestId("model-notice");
        await composerNotice.waitFor();
        expect(await composerNotice.getByTestId("model-notice-link").getAttribute("href")).toBe(
          "/settings/providers",
        );
        await byTest("composer-input").fill("Hello, is anyone there?");
        await byTest("composer-send").click();
        const error = byTest("run-error").first();
        await error.waitFor();
        expect(await text(error)).toContain("no model chosen");
        expect(await error.getByTestId("settings-link").getAttribute("href")).toBe("/settings/providers");
        expect(llm.requests).toHaveLength(0);
        await shoot(page, "05-chat-no-model");
      });
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "a key and base URL typed in for the built-in DeepSeek provider make the agent answer",
    async () => {
      await step("onboarding/06-deepseek-key", async () => {
        // The error itself links to where it is fixed.
        await byTest("run-error").first().getByTestId("settings-link").click();
        await page.waitForURL(/\/settings\/providers$/);
        const deepseek = provider("deepseek");
        await deepseek.getByTestId("provider-base-url").fill(`${llm.url}/v1`);
        await deepseek.getByTestId("provider-key-input").fill(DEEPSEEK_KEY);
        await deepseek.getByTestId("provider-save").click();
        await until(() => deepseek.getByTestId("provider-key-status").getAttribute("data-source")).toBe(
          "settings",
        );
        expect(await text(deepseek.getByTestId("provider-key-status"))).toBe("key sk-…4242");
        // Saving one provider leaves the others as they were.
        expect(await provider("openai").getByTestId("provider-key-status").getAttribute("data-source")).toBe(
          "environment",
        );
        await byTest("default-model-input").fill("deepseek:deepseek-chat");
        await byTest("default-model-save").click();
        await until(() => byTest("settings-model-status").count()).toBe(0);
        expect(await page.content()).not.toContain(DEEPSEEK_KEY);
        const status = await apiGet<{ ready: boolean }>("/api/models/status");
        expect(status.ready).toBe(true);

        await page.goto(`${server.url}/c/${encodeURIComponent(channelId)}`);
        await byTest("composer").waitFor();
        await byTest("composer-input").fill("And now?");
        await byTest("composer-send").click();
        await page
          .locator('[data-testid="message"][data-author-type="agent"]')
          .filter({ hasText: ANSWER })
          .waitFor();
        expect(await byTest("model-notice").count()).toBe(0);
        expect(llm.requests.at(-1)?.headers.authorization).toBe(`Bearer ${DEEPSEEK_KEY}`);
        expect(llm.requests.at(-1)?.model).toBe("deepseek-chat");

        // Home now lists the chat; on a phone it does not point at a list "on the left" it cannot see.
        await page.locator(".brand").click();
        await byTest("home-recent").waitFor();
        await page.setViewportSize(PHONE);
        // biome-ignore lint/performance/useDomNodeTextContent: what is visible at this width is checked
        const phoneHint = await byTest("home-hint").innerText();
        expect(phoneHint).not.toContain("on the left");
        expect(phoneHint).toContain("go on with one below");
        await page.setViewportSize(WIDE);
        // biome-ignore lint/performance/useDomNodeTextContent: what is visible at this width is checked
        expect(await byTest("home-hint").innerText()).toContain("go on with a recent one");
        await shoot(page, "06-home-with-chats");
        await page.goto(`${server.url}/c/${encodeURIComponent(channelId)}`);
        await byTest("composer").waitFor();
      });
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "deleting a message asks in the app's own dialog: Cancel keeps it, Delete removes it",
    async () => {
      await step("onboarding/07-confirm-dialog", async () => {
        const answer = page
          .locator('[data-testid="message"][data-author-type="agent"]')
          .filter({ hasText: ANSWER });
        await answer.hover();
        await answer.getByTestId("message-delete").click();
        const dialog = byTest("confirm-dialog");
        await dialog.waitFor();
        expect(await dialog.getAttribute("aria-label")).toBe("Delete this message?");
        expect(await dialog.getAttribute("role")).toBe("dialog");
        await shoot(page, "07-confirm-dialog");
        await byTest("confirm-cancel").click();
        await until(() => dialog.count()).toBe(0);
        expect(await answer.count()).toBe(1);

        await answer.hover();
        await answer.getByTestId("message-delete").click();
        await byTest("confirm-ok").click();
        await until(() => answer.count()).toBe(0);

        // Escape answers no as well.
        const mine = page.locator('[data-testid="message"][data-author-type="user"]').last();
        await mine.hover();
        await mine.getByTestId("message-delete").click();
        await dialog.waitFor();
        await page.keyboard.press("Escape");
        await until(() => dialog.count()).toBe(0);
        expect(await mine.count()).toBe(1);
      });
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "after a server restart the live connection comes back by itself and answers stream again",
    async () => {
      await step("onboarding/08-reconnected", async () => {
        const status = byTest("connection-status");
        expect(await status.count()).toBe(0);
        const { start } = await server.stop();
        await until(() => status.getAttribute("data-status")).toBe("reconnecting");
        expect(await text(status)).toBe("Reconnecting…");
        await start();
        // Back to open (the badge goes away) with no reload; the 2 s backoff cap is unit-tested.
        await until(() => status.count()).toBe(0);
        await byTest("composer-input").fill("Still there after the restart?");
        await byTest("composer-send").click();
        const answers = page
          .locator('[data-testid="message"][data-author-type="agent"]')
          .filter({ hasText: ANSWER });
        await until(() => answers.count()).toBe(1);
      });
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "a member's home page has no admin links, and Settings opens on their account",
    async () => {
      let context: BrowserContext | undefined;
      await step("onboarding/09-member-home", async () => {
        await page.goto(`${server.url}/settings/people`);
        await byTest("user-add-name").fill("mia");
        await byTest("user-add-password").fill(MEMBER_PASSWORD);
        await byTest("user-add-role").selectOption("member");
        await byTest("user-add-submit").click();
        await page.locator('[data-testid="user-row"]').filter({ hasText: "mia" }).waitFor();

        context = await browser.newContext({ viewport: WIDE });
        const member = await context.newPage();
        const memberLog = new Log(member);
        await member.goto(server.url);
        await logIn(member, "mia", MEMBER_PASSWORD);
        await member.getByTestId("home-page").waitFor();
        expect(await member.getByTestId("home-manage-agents").count()).toBe(0);
        expect(await member.getByText("Manage agents").count()).toBe(0);
        expect(await member.getByTestId("model-notice").count()).toBe(0);
        await shoot(member, "09-member-home");
        await member.getByTestId("nav-settings").click();
        await member.waitForURL(/\/settings$/);
        expect(await member.getByTestId("settings-page").getAttribute("data-section")).toBe("account");
        expect(await member.getByTestId("settings-tab-providers").count()).toBe(0);
        expect(memberLog.uncaught()).toEqual([]);
      });
      await context?.close();
    },
    STEP_TIMEOUT_MS,
  );

  it("logged no page error, native dialog or CSP violation", () => {
    expect(log.uncaught()).toEqual([]);
    expect(log.cspViolations()).toEqual([]);
  });
});
