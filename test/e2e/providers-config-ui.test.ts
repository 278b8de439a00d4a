/**
 * Settings → Providers with custom providers from the config file, in real headless Chromium
 * against a real server: they are listed under Custom providers, marked "from config file", with
 * their base URL and key sources; a key saved in the UI overrides the file's, and Reset brings the
 * file's back. Providers added in the UI are not marked.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { flow, type PageLog, resetArtifacts } from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack, setUpOwner } from "./stack.js";

const configDir = mkdtempSync(join(tmpdir(), "dimsum-e2e-config-"));
const configPath = join(configDir, "dimsum.config.json");
writeFileSync(
  configPath,
  JSON.stringify({
    providers: {
      corp: { baseUrl: "http://127.0.0.1:9/corp/v1", apiKeyEnv: "CORP_LLM_KEY" },
      lab: { baseUrl: "http://127.0.0.1:9/lab/v1", protocol: "anthropic", apiKeyEnv: "LAB_KEY" },
    },
  }),
);

const until = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 10_000, interval: 50 });

describe("Settings → Providers with the config file's providers", () => {
  let page: Page;
  let log: PageLog;
  let server: E2eServer;
  e2eStack(
    {
      before: () => resetArtifacts("providers-config"),
      server: { env: { DIMSUM_CONFIG: configPath, CORP_LLM_KEY: "sk-corp-0123456789abcdef" } },
    },
    (stack) => {
      page = stack.page;
      log = stack.log;
      server = stack.server;
    },
  );
  const provider = (name: string) => page.locator(`[data-testid="provider"][data-provider="${name}"]`);
  const text = async (locator: ReturnType<Page["locator"]>) => ((await locator.textContent()) ?? "").trim();

  it("lists them marked as from the config file; a key saved here overrides, Reset brings the file's back", async () => {
    await flow(page, log, server.logLines, "providers-config/listed", async () => {
      await setUpOwner(page, server.url, "owner-password-1");
      await page.getByTestId("app-shell").waitFor();
      await page.getByTestId("nav-settings").click();
      const custom = page.getByTestId("settings-custom-providers");
      await custom.locator('[data-testid="provider"][data-provider="corp"]').waitFor();
      expect(
        await custom
          .locator('[data-testid="provider"]')
          .evaluateAll((els) => els.map((el) => el.getAttribute("data-provider"))),
      ).toEqual(["corp", "lab"]);
      const corp = provider("corp");
      expect(await text(corp.getByTestId("provider-from-config"))).toBe("from config file");
      expect(await text(corp.getByTestId("provider-key-status"))).toBe("key from environment");
      expect(await text(corp.getByTestId("provider-source"))).toContain(
        "http://127.0.0.1:9/corp/v1 (from config file)",
      );
      expect(await page.content()).not.toContain("0123456789abcdef");
      const lab = provider("lab");
      expect(await text(lab)).toContain("anthropic");
      expect(await text(lab.getByTestId("provider-key-status"))).toBe("no key");
      expect(await lab.getByTestId("provider-forget").count()).toBe(0);
    });

    await flow(page, log, server.logLines, "providers-config/key-saved", async () => {
      const lab = provider("lab");
      await lab.getByTestId("provider-key-input").fill("sk-lab-0123456789");
      await lab.getByTestId("provider-save").click();
      await until(() => text(lab.getByTestId("provider-key-status"))).toBe("key sk-…6789");
      // Still the file's provider, with the file's URL and protocol.
      expect(await text(lab.getByTestId("provider-from-config"))).toBe("from config file");
      expect(await text(lab.getByTestId("provider-source"))).toContain(
        "http://127.0.0.1:9/lab/v1 (from config file)",
      );
      expect(await text(lab)).toContain("anthropic");
      await lab.getByTestId("provider-forget").click();
      await page.getByTestId("confirm-ok").click();
      await until(() => text(lab.getByTestId("provider-key-status"))).toBe("no key");
      // Reset, not removed: the file still defines it.
      expect(await text(lab.getByTestId("provider-from-config"))).toBe("from config file");
    });
  }, 60_000);
});
