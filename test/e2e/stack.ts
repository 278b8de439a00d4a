/**
 * What every browser test file starts from: the scripted fake LLM, the e2e server over it, Chromium
 * and one page, started before the file's flows and closed after them; plus the first-run owner
 * setup through the UI, which every file begins with.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import {
  type FakeLlmServer,
  type FakeLlmServerOptions,
  startFakeLlmServer,
} from "../../src/testing/fake-llm-server.js";
import { launchChromium, openPage, type PageLog } from "./browser.js";
import { type E2eServer, type E2eServerOptions, startE2eServer } from "./e2e-server.js";

export interface E2eStack {
  llm: FakeLlmServer;
  server: E2eServer;
  browser: Browser;
  page: Page;
  log: PageLog;
}

/** Registers the file's hooks; `bind` receives the running stack before the first flow. */
export function e2eStack(
  options: { llm?: FakeLlmServerOptions; server?: E2eServerOptions; before?: () => void },
  bind: (stack: E2eStack) => void | Promise<void>,
): void {
  let stack: Partial<E2eStack> = {};
  beforeAll(async () => {
    options.before?.();
    const llm = await startFakeLlmServer(options.llm ?? {});
    stack.llm = llm;
    const server = await startE2eServer(llm.url, options.server ?? {});
    stack.server = server;
    const browser = await launchChromium();
    stack.browser = browser;
    const { page, log } = await openPage(browser);
    stack = { llm, server, browser, page, log };
    await bind(stack as E2eStack);
  }, 60_000);
  afterAll(async () => {
    await stack.browser?.close();
    await stack.server?.close();
    await stack.llm?.close();
  }, 30_000);
}

/** Creates the owner account through the first-run form; the caller waits for the page it expects. */
export async function setUpOwner(page: Page, url: string, password: string): Promise<void> {
  await page.goto(url);
  await page.getByTestId("setup-form").waitFor();
  await page.getByTestId("login-username").fill("owner");
  await page.getByTestId("login-password").fill(password);
  await page.getByTestId("setup-confirm").fill(password);
  await page.getByTestId("login-submit").click();
}
