/**
 * Single sign-on in real headless Chromium: the owner adds an OpenID Connect provider in Settings →
 * Sign-in (a real `oidc-provider` on loopback), a new person signs in with "Sign in with …" through
 * the provider's own login and consent pages and lands back in Dimsum with the role their groups
 * give; a refused sign-in comes back to the sign-in page with the reason. Screenshots at 1440×900 and
 * 390×844 in test-artifacts/e2e/sso/.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalOidcProvider, startLocalOidcProvider } from "../support/local-oidc-provider.js";
import {
  animationsSettled,
  flow,
  openPage,
  type PageLog,
  resetArtifacts,
  screenshot,
  sidewaysOverflow,
} from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack, setUpOwner } from "./stack.js";

const PASSWORD = "owner-password-1";
const WIDE = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };
let server: E2eServer;
let browser: Browser;
let page: Page;
let log: PageLog;
let idp: LocalOidcProvider;

const step = (target: Page, targetLog: PageLog, name: string, body: () => Promise<void>) =>
  flow(target, targetLog, server.logLines, `sso/${name}`, body);

async function shots(target: Page, name: string): Promise<void> {
  for (const [size, label] of [
    [WIDE, "1440"],
    [PHONE, "390"],
  ] as const) {
    await target.setViewportSize(size);
    await animationsSettled(target);
    expect(await sidewaysOverflow(target)).toBeLessThanOrEqual(0);
    await screenshot(target, `sso/${name}-${label}`);
  }
  await target.setViewportSize(WIDE);
}

e2eStack({ before: () => resetArtifacts("sso") }, (stack) => {
  ({ server, browser, page, log } = stack);
});

beforeAll(async () => {
  idp = await startLocalOidcProvider([`${server.url}/api/auth/sso/corp/callback`], {
    wang: { email: "wang.wei@corp.example", name: "王伟", groups: ["dimsum-admins"] },
    eve: { email: "eve@elsewhere.example" },
  });
});

afterAll(async () => {
  await idp?.close();
});

describe("single sign-on in the web UI", () => {
  it("adds a provider in Settings, then a new person signs in with it", async () => {
    await step(page, log, "01-settings", async () => {
      await setUpOwner(page, server.url, PASSWORD);
      await page.getByTestId("sidebar").waitFor();
      await page.goto(`${server.url}/settings/sign-in`);
      await page.getByTestId("sign-in-empty").waitFor();
      await page.getByTestId("sign-in-add").click();
      await page.getByTestId("sign-in-id").fill("corp");
      await page.getByTestId("sign-in-name").fill("Corp SSO");
      await page.getByTestId("sign-in-issuer").fill(idp.issuer);
      await page.getByTestId("sign-in-client-id").fill(idp.clientId);
      await page.getByTestId("sign-in-client-secret").fill(idp.clientSecret);
      await page.getByTestId("sign-in-domains").fill("corp.example");
      await page.getByTestId("sign-in-role-claim").fill("groups");
      await page.getByTestId("sign-in-role-map").fill("dimsum-admins=admin");
      await page.getByTestId("sign-in-new-accounts").selectOption("create");
      await shots(page, "01-provider-form");
      await page.getByTestId("sign-in-save").click();
      await page.locator('[data-testid="sign-in-provider"][data-provider="corp"]').waitFor();
      expect(await page.getByTestId("settings-sign-in").textContent()).not.toContain(idp.clientSecret);
      await shots(page, "02-provider-saved");
    });

    const visitor = await openPage(browser);
    try {
      await step(visitor.page, visitor.log, "03-sign-in", async () => {
        await visitor.page.goto(server.url);
        const button = visitor.page.getByTestId("sso-corp");
        await button.waitFor();
        expect((await button.textContent())?.trim()).toBe("Sign in with Corp SSO");
        await shots(visitor.page, "03-sign-in-page");
        await button.click();
        // The provider's own login page, then its consent page.
        await visitor.page.locator('input[name="login"]').waitFor();
        await visitor.page.locator('input[name="login"]').fill("wang");
        await visitor.page.locator('input[name="password"]').fill("anything");
        await screenshot(visitor.page, "sso/04-provider-login-1440");
        await visitor.page.locator('button[type="submit"]').click();
        await visitor.page.locator('input[name="prompt"][value="consent"]').waitFor({ state: "attached" });
        await visitor.page.locator('button[type="submit"]').click();
        // Back in Dimsum, signed in as the new account, an admin by their group.
        await visitor.page.getByTestId("sidebar").waitFor();
        const me = await visitor.page.evaluate(async () => {
          const res = await fetch("/api/auth/me");
          return ((await res.json()) as { user: { username: string; role: string } }).user;
        });
        expect(me).toMatchObject({ username: "wang.wei@corp.example", role: "admin" });
        await shots(visitor.page, "05-signed-in");
      });
    } finally {
      await visitor.page.context().close();
    }

    const stranger = await openPage(browser);
    try {
      await step(stranger.page, stranger.log, "06-refused", async () => {
        await stranger.page.goto(server.url);
        await stranger.page.getByTestId("sso-corp").click();
        await stranger.page.locator('input[name="login"]').fill("eve");
        await stranger.page.locator('input[name="password"]').fill("anything");
        await stranger.page.locator('button[type="submit"]').click();
        await stranger.page.locator('input[name="prompt"][value="consent"]').waitFor({ state: "attached" });
        await stranger.page.locator('button[type="submit"]').click();
        const error = stranger.page.getByTestId("login-error");
        await error.waitFor();
        expect(await error.textContent()).toContain("only @corp.example addresses may");
        // The reason is shown once: the address no longer carries it.
        expect(new URL(stranger.page.url()).search).toBe("");
        await shots(stranger.page, "06-refused");
      });
    } finally {
      await stranger.page.context().close();
    }
  }, 120_000);
});
