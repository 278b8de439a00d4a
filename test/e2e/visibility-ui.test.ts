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

  it("a knowledge base made Only me, then shared with a member, from the knowledge page", async () => {
    await flow(page, log, server.logLines, "visibility/knowledge", async () => {
      await page.setViewportSize({ width: 1280, height: 860 });
      await byTest("nav-knowledge").click();
      await byTest("kb-create-visibility").waitFor();
      await byTest("kb-create-name").fill("diary");
      await byTest("kb-create-visibility-private").check();
      await byTest("kb-create-submit").click();
      const row = page.locator('[data-testid="kb-row"][data-kb="diary"]');
      await row.getByTestId("visibility-badge-private").waitFor();
      const listAs = async (session: Session) =>
        (
          (await (await call(server.url, "/api/kb", { session })).json()) as {
            bases: Array<{ name: string; visibility?: string; ownerId?: string; allowedUsers?: string[] }>;
          }
        ).bases;
      const mine = (await listAs(owner)).find((b) => b.name === "diary");
      expect(mine?.visibility).toBe("private");
      expect(mine?.ownerId).toBe(owner.userId);
      expect((await listAs(member)).map((b) => b.name)).not.toContain("diary");
      // Shared with the member from the base's detail.
      await byTest("kb-detail").waitFor();
      await byTest("kb-visibility-field-people").check();
      await byTest("kb-visibility-field-person-member-user").check();
      await byTest("kb-visibility-save").click();
      await row.getByTestId("visibility-badge-people").waitFor();
      await until(async () => (await listAs(member)).map((b) => b.name)).toContain("diary");
      expect((await listAs(owner)).find((b) => b.name === "diary")?.allowedUsers).toEqual([member.userId]);
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
