/**
 * Who sees an agent, set in the agent editor, in real headless Chromium against a real server: the
 * owner makes one agent "Only me" and shares another with one member; the API record says so, the
 * agents list marks them, and the member's own page lists the shared agent but not the private one.
 * Screenshots of the editor with the field, wide and narrow, in English and Chinese.
 */
import type { Browser, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import type { AgentRecord } from "../../src/team/types.js";
import { call, type Session, withUsers } from "../server/helpers.js";
import { ARTIFACTS_DIR, flow, type PageLog, pageApi, resetArtifacts, screenshot } from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack } from "./stack.js";

const until = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 10_000, interval: 50 });

async function signIn(page: Page, url: string, username: string, password: string): Promise<void> {
  await page.goto(url);
  await page.getByTestId("login-username").fill(username);
  await page.getByTestId("login-password").fill(password);
  await page.getByTestId("login-submit").click();
  await page.getByTestId("app-shell").waitFor();
}

async function agentAs(
  url: string,
  session: Session,
  id: string,
): Promise<{ status: number; body: unknown }> {
  const res = await call(url, `/api/agents/${id}`, { session });
  return { status: res.status, body: await res.json() };
}

describe("agent visibility in the web UI", () => {
  let page: Page;
  let log: PageLog;
  let server: E2eServer;
  let browser: Browser;
  let owner: Session;
  let member: Session;
  e2eStack({ before: () => resetArtifacts("visibility") }, async (stack) => {
    page = stack.page;
    log = stack.log;
    server = stack.server;
    browser = stack.browser;
    const made = await withUsers(server.url, ["member"]);
    owner = made.owner;
    member = made.users.member!;
  });
  const byTest = (id: string) => page.getByTestId(id);

  it("the owner makes an agent Only me and shares another with a member", async () => {
    await flow(page, log, server.logLines, "visibility/only-me", async () => {
      await signIn(page, server.url, "alice", "owner-password-1");
      await byTest("nav-agents").click();
      await byTest("agent-new").click();
      await byTest("agent-visibility").waitFor();
      // A new agent is the creator's, shared with everyone until chosen otherwise.
      expect(await byTest("agent-visibility-owner").textContent()).toContain("You will own it");
      expect(await byTest("agent-visibility-everyone").isChecked()).toBe(true);
      await byTest("agent-id").fill("secret");
      await byTest("agent-name").fill("Secret agent");
      await byTest("agent-visibility-private").check();
      await byTest("agent-save").click();
      await page.waitForURL(/\/agents\/secret$/);
      const record = (await agentAs(server.url, owner, "secret")).body as AgentRecord;
      expect(record.visibility).toBe("private");
      expect(record.ownerId).toBe(owner.userId);
      // Opened again, the editor shows it and names the owner; the list marks it with a lock.
      await until(() => byTest("agent-visibility-private").isChecked()).toBe(true);
      expect(await byTest("agent-visibility-owner").textContent()).toContain("Owner: you");
      await byTest("agent-item-secret").getByTestId("visibility-badge-private").waitFor();
    });

    await flow(page, log, server.logLines, "visibility/chosen-people", async () => {
      await byTest("agent-new").click();
      await byTest("agent-id").fill("shared");
      await byTest("agent-name").fill("Shared agent");
      await byTest("agent-visibility-people").check();
      await byTest("agent-visibility-person-member-user").check();
      await byTest("agent-save").click();
      await page.waitForURL(/\/agents\/shared$/);
      const record = (await agentAs(server.url, owner, "shared")).body as AgentRecord;
      expect(record.visibility).toBe("people");
      expect(record.allowedUsers).toEqual([member.userId]);
      await byTest("agent-item-shared").getByTestId("visibility-badge-people").waitFor();
      // Saving another change leaves who sees it alone.
      await byTest("agent-emoji").fill("🧪");
      await byTest("agent-save").click();
      await until(async () => ((await agentAs(server.url, owner, "shared")).body as AgentRecord).emoji).toBe(
        "🧪",
      );
      expect(((await agentAs(server.url, owner, "shared")).body as AgentRecord).allowedUsers).toEqual([
        member.userId,
      ]);
    });

    await flow(page, log, server.logLines, "visibility/member-view", async () => {
      // The API hides the private agent from the member (the same 404 as for none) …
      expect((await agentAs(server.url, member, "secret")).status).toBe(404);
      expect((await agentAs(server.url, member, "shared")).status).toBe(200);
      // … and so does the member's own page.
      const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
      try {
        const memberPage = await context.newPage();
        memberPage.setDefaultTimeout(10_000);
        await signIn(memberPage, server.url, "member-user", "member-password-1");
        await memberPage.getByTestId("nav-agents").click();
        await memberPage.getByTestId("agent-item-shared").waitFor();
        expect(await memberPage.getByTestId("agent-item-secret").count()).toBe(0);
        // The member sees who may see the shared agent but may not change it.
        await memberPage.getByTestId("agent-item-shared").click();
        await memberPage.getByTestId("agent-visibility-readonly").waitFor();
        expect(await memberPage.getByTestId("agent-visibility-private").isDisabled()).toBe(true);
        await screenshot(memberPage, "visibility/member-read-only");
      } finally {
        await context.close();
      }
    });
  });

  it("screenshots of the editor with the field, wide and narrow, English and Chinese", async () => {
    await flow(page, log, server.logLines, "visibility/screens", async () => {
      for (const locale of ["en", "zh-CN"] as const) {
        await pageApi(page, server.url, "PUT", "/api/auth/locale", { locale });
        for (const [width, height] of [
          [1440, 900],
          [390, 844],
        ] as const) {
          await page.setViewportSize({ width, height });
          await page.goto(`${server.url}/agents/shared`);
          await byTest("agent-visibility").waitFor();
          await until(() => page.evaluate(() => document.documentElement.lang)).toBe(locale);
          await byTest("agent-visibility-person-member-user").waitFor();
          await byTest("agent-visibility").scrollIntoViewIfNeeded();
          await page.screenshot({
            path: `${ARTIFACTS_DIR}visibility/editor-${locale}-${width}.png`,
          });
        }
      }
      await pageApi(page, server.url, "PUT", "/api/auth/locale", { locale: "en" });
    });
  });
});
