/**
 * Rights that change while the page is open, in real headless Chromium against a real server: an
 * admin looking at a member's private group is demoted by the owner through the API. Without a
 * reload, the page shows the member's navigation, the private group leaves the sidebar and the open
 * chat closes with a notice. Deleting the account then sends the page to the login form with why.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import type { ChannelRecord } from "../../src/team/types.js";
import { call, type Session, withUsers } from "../server/helpers.js";
import { flow, type PageLog, resetArtifacts } from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack } from "./stack.js";

const until = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 10_000, interval: 50 });

async function expectOk(res: Response, status = 200): Promise<unknown> {
  const body = await res.text();
  if (res.status !== status) throw new Error(`${res.url}: ${res.status} ${body}`);
  return body === "" ? undefined : JSON.parse(body);
}

describe("rights that change while the page is open", () => {
  let page: Page;
  let log: PageLog;
  let server: E2eServer;
  e2eStack({ before: () => resetArtifacts("rights") }, (stack) => {
    page = stack.page;
    log = stack.log;
    server = stack.server;
  });

  it("a demoted admin loses the admin navigation and a member's private group at once", async () => {
    let owner: Session;
    let admin: Session;
    let privateGroup: ChannelRecord;
    let sharedGroup: ChannelRecord;
    const byTest = (id: string) => page.getByTestId(id);
    await flow(page, log, server.logLines, "rights/admin-views-private-group", async () => {
      const { owner: o, users } = await withUsers(server.url, ["admin", "member"]);
      owner = o;
      admin = users.admin!;
      privateGroup = (await expectOk(
        await call(server.url, "/api/channels", {
          session: users.member!,
          body: { kind: "group", name: "Member private notes", userIds: [] },
        }),
        201,
      )) as ChannelRecord;
      sharedGroup = (await expectOk(
        await call(server.url, "/api/channels", {
          session: owner,
          body: { kind: "group", name: "Everyone", userIds: [admin.userId] },
        }),
        201,
      )) as ChannelRecord;
      await expectOk(
        await call(server.url, `/api/channels/${privateGroup.id}/messages`, {
          session: users.member!,
          body: { text: "only for me" },
        }),
        201,
      );
      await page.goto(server.url);
      await byTest("login-form").waitFor();
      await byTest("login-username").fill("admin-user");
      await byTest("login-password").fill("admin-password-1");
      await byTest("login-submit").click();
      await byTest("app-shell").waitFor();
      await byTest("nav-connectors").waitFor();
      // An admin sees every group, the member's private one included.
      await byTest(`channel-item-${privateGroup.id}`).click();
      await page.locator(`[data-testid="chat-page"][data-channel-id="${privateGroup.id}"]`).waitFor();
      await page.getByText("only for me").waitFor();
      // Marks this document: a reload would lose it.
      await page.evaluate(() => {
        (window as unknown as { notReloaded: boolean }).notReloaded = true;
      });
    });

    await flow(page, log, server.logLines, "rights/demoted", async () => {
      await expectOk(
        await call(server.url, `/api/users/${admin.userId}`, {
          session: owner,
          method: "PATCH",
          body: { role: "member" },
        }),
      );
      await page
        .getByTestId("notice")
        .filter({ hasText: "You no longer have access to this chat" })
        .waitFor();
      await until(() => byTest(`channel-item-${privateGroup.id}`).count()).toBe(0);
      await until(() =>
        page.locator(`[data-testid="chat-page"][data-channel-id="${privateGroup.id}"]`).count(),
      ).toBe(0);
      await until(async () => new URL(page.url()).pathname).toBe("/");
      await until(() => byTest("nav-connectors").count()).toBe(0);
      // Still a member: the shared group stays, and Knowledge and Memory stay in the navigation.
      await byTest(`channel-item-${sharedGroup.id}`).waitFor();
      await byTest("nav-knowledge").waitFor();
      expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(
        true,
      );
      // The server agrees: the session now carries the member role.
      const me = (await (await page.request.get(`${server.url}/api/auth/me`)).json()) as {
        user: { role: string };
      };
      expect(me.user.role).toBe("member");
      // Settings opens as a member's: on the account, with no Providers tab.
      await byTest("nav-settings").click();
      await page.locator('[data-testid="settings-page"][data-section="account"]').waitFor();
      expect(await byTest("settings-page").textContent()).toContain("(member)");
      expect(await byTest("settings-tabs").textContent()).not.toContain("Providers");
    });

    await flow(page, log, server.logLines, "rights/account-deleted", async () => {
      await expectOk(
        await call(server.url, `/api/users/${admin.userId}`, { session: owner, method: "DELETE" }),
        204,
      );
      await byTest("login-page").waitFor();
      expect(await byTest("login-reason").textContent()).toContain("Your account was deleted");
    });
  }, 90_000);
});
